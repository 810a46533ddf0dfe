//! A client's terminal interface on a pseudo-terminal, for the paths only it takes (Qwen Code
//! opens its cross-session socket only there).
//!
//! The terminal is util-linux `script`, which gives the command a real pseudo-terminal as its
//! controlling terminal and relays this process's pipe to it: that is the whole job, done by a
//! program every Linux has, where a pty crate would need the child's session and controlling
//! terminal set up by hand. What the interface draws is kept (bounded) for a failure's message.

use std::io::{Read, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use acc_core::error::AccResult;

use crate::failed;

/// How long [`Tui::type_line`] waits for the interface to draw the typed text before it
/// presses Enter anyway.
const ECHO: Duration = Duration::from_secs(15);

/// How much of the screen output is kept.
const KEPT: usize = 64 * 1024;

/// A command running on a pseudo-terminal; it and everything it started are killed when this
/// is dropped.
pub struct Tui {
    script: Child,
    input: Option<ChildStdin>,
    screen: Arc<Mutex<Vec<u8>>>,
}

impl std::fmt::Debug for Tui {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tui")
            .field("pid", &self.script.id())
            .finish_non_exhaustive()
    }
}

impl Tui {
    /// Run `command` (its program, arguments, environment and folder) on a new terminal.
    pub fn start(command: &Command) -> AccResult<Self> {
        let line = std::iter::once(command.get_program())
            .chain(command.get_args())
            .map(|part| acc_clients::render::shell_quote(&part.to_string_lossy()))
            .collect::<Vec<_>>()
            .join(" ");
        let mut script = Command::new("script");
        script
            .args(["--quiet", "--flush", "--return", "--command"])
            .arg(format!("exec {line}"))
            .arg("/dev/null")
            .env("SHELL", "/bin/sh")
            .env("TERM", "xterm-256color");
        for (key, value) in command.get_envs() {
            match value {
                Some(value) => script.env(key, value),
                None => script.env_remove(key),
            };
        }
        if let Some(dir) = command.get_current_dir() {
            script.current_dir(dir);
        }
        let mut child = script
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| failed("script (util-linux, the pseudo-terminal)", e))?;
        let input = child.stdin.take();
        let screen = Arc::new(Mutex::new(Vec::new()));
        if let Some(mut output) = child.stdout.take() {
            let screen = screen.clone();
            std::thread::spawn(move || {
                let mut buffer = [0u8; 4096];
                while let Ok(n) = output.read(&mut buffer) {
                    if n == 0 {
                        break;
                    }
                    if let Ok(mut kept) = screen.lock() {
                        kept.extend_from_slice(&buffer[..n]);
                        let over = kept.len().saturating_sub(KEPT);
                        kept.drain(..over);
                    }
                }
            });
        }
        Ok(Self {
            script: child,
            input,
            screen,
        })
    }

    /// Type `text` and press Enter, as a person would: the key only once the interface has
    /// drawn the text (so it is in its input, however slowly a loaded machine runs it), and
    /// after a pause, so the interface does not take the key as part of a paste. An interface
    /// that never draws the text still gets the key, after [`ECHO`].
    pub fn type_line(&mut self, text: &str) -> AccResult<()> {
        let drawn_before = self.screen().matches(text).count();
        let input = self
            .input
            .as_mut()
            .ok_or_else(|| failed("terminal", "its input is closed"))?;
        input
            .write_all(text.as_bytes())
            .and_then(|()| input.flush())
            .map_err(|e| failed("terminal input", e))?;
        let typed = std::time::Instant::now();
        while self.screen().matches(text).count() <= drawn_before && typed.elapsed() < ECHO {
            std::thread::sleep(Duration::from_millis(20));
        }
        std::thread::sleep(Duration::from_millis(300));
        let input = self
            .input
            .as_mut()
            .ok_or_else(|| failed("terminal", "its input is closed"))?;
        input
            .write_all(b"\r")
            .and_then(|()| input.flush())
            .map_err(|e| failed("terminal input", e))
    }

    /// Whether the terminal (and so the command) has ended.
    pub fn ended(&mut self) -> bool {
        !matches!(self.script.try_wait(), Ok(None))
    }

    /// The end of what the interface drew, without its escape sequences, for a message.
    pub fn screen(&self) -> String {
        let kept = self.screen.lock().map(|k| k.clone()).unwrap_or_default();
        let text = String::from_utf8_lossy(&kept);
        let mut plain = String::new();
        let mut chars = text.chars().peekable();
        // Escape sequences are dropped (CSI to its final byte, others whole) and runs of
        // blank space folded: enough to read the words of a dialog in a failure.
        while let Some(c) = chars.next() {
            if c == '\u{1b}' {
                if chars.peek() == Some(&'[') {
                    chars.next();
                    while chars.next().is_some_and(|c| !('@'..='~').contains(&c)) {}
                } else {
                    chars.next();
                }
            } else if c.is_whitespace() {
                if !plain.ends_with(' ') {
                    plain.push(' ');
                }
            } else if !c.is_control() {
                plain.push(c);
            }
        }
        let start = plain.len().saturating_sub(2000);
        let start = (start..plain.len())
            .find(|i| plain.is_char_boundary(*i))
            .unwrap_or(plain.len());
        plain[start..].to_string()
    }

    /// Stop the command and everything it started; wait for the terminal to end.
    pub fn stop(&mut self) {
        for leader in acc_clients::process::children(i64::from(self.script.id())) {
            if let Ok(group) = u32::try_from(leader) {
                acc_clients::process::end_group(group, Duration::from_secs(5));
            }
        }
        self.input = None;
        let _ = self.script.kill();
        let _ = self.script.wait();
    }
}

impl Drop for Tui {
    fn drop(&mut self) {
        self.stop();
    }
}
