//! Unit tests of the wake helpers: the registry read and the socket checks.

use super::*;

#[test]
fn a_wake_carries_only_acc_text_and_a_cleaned_id() {
    let text = wake_text("m_01\n</x>IGNORE");
    assert!(text.contains("(m_01xIGNORE)"), "{text}");
    assert!(!text.contains('\n') && !text.contains('<'));
}

#[test]
fn a_registry_must_be_an_object_naming_the_pid() {
    let dir = tempfile::tempdir().expect("dir");
    let sessions = dir.path().join("sessions");
    std::fs::create_dir_all(&sessions).expect("sessions");
    assert_eq!(
        session_registry(dir.path(), 7).err(),
        Some(RegistryProblem::Missing)
    );
    for (text, problem) in [
        ("", RegistryProblem::NotJson),
        ("[1]", RegistryProblem::NotJson),
        ("{\"pid\": 8}", RegistryProblem::OtherPid),
        ("{\"pid\": \"7\"}", RegistryProblem::OtherPid),
    ] {
        std::fs::write(sessions.join("7.json"), text).expect("write");
        assert_eq!(
            session_registry(dir.path(), 7).err(),
            Some(problem),
            "{text}"
        );
    }
    std::fs::write(sessions.join("7.json"), "{\"pid\": 7}").expect("write");
    assert!(session_registry(dir.path(), 7).is_ok());
}

#[test]
fn only_a_private_socket_of_this_user_passes() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().expect("dir");
    let socket = dir.path().join("s.sock");
    let _listener = std::os::unix::net::UnixListener::bind(&socket).expect("bind");
    std::fs::set_permissions(&socket, std::fs::Permissions::from_mode(0o600)).expect("chmod");
    assert_eq!(private_socket(&socket), Ok(()));
    let link = dir.path().join("link.sock");
    std::os::unix::fs::symlink(&socket, &link).expect("symlink");
    assert_eq!(
        private_socket(&link),
        Err("the messaging socket is a symlink")
    );
    assert!(same_file(&link, &socket));
    let file = dir.path().join("plain");
    std::fs::write(&file, "").expect("file");
    assert_eq!(
        private_socket(&file),
        Err("the messaging socket path is not a socket")
    );
    std::fs::set_permissions(&socket, std::fs::Permissions::from_mode(0o660)).expect("chmod");
    assert_eq!(
        private_socket(&socket),
        Err("the messaging socket is open to group or others")
    );
    assert_eq!(
        private_socket(&dir.path().join("none")),
        Err("the messaging socket does not exist")
    );
}
