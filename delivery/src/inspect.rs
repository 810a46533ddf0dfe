//! What ACC checks of an adapter file before any of its code can run: that it is a regular
//! file and its directory a directory, neither writable by others nor owned by anyone but this
//! user or root; that it is a shared library of this platform (read with the `object` crate,
//! never loaded); and that it carries ACC's marker as a data symbol whose bytes, read from the
//! file, name an ABI and API this host speaks and a library that unwinds panics.
//!
//! Only a file that passes is handed to the dynamic loader, so a file that is not an ACC
//! adapter (random bytes, a library with constructors, an impostor exporting the marker name
//! as a function) never runs, and nothing in it can crash the host.

use std::os::unix::fs::MetadataExt;
use std::path::Path;

use acc_adapter_api::{AbiVersion, MARKER_MAGIC, MARKER_SYMBOL, Marker};
use object::elf::{self, FileHeader32, FileHeader64};
use object::read::elf::FileHeader;
use object::{Endianness, Object, ObjectSection, ObjectSymbol, ReadRef, SymbolIndex, SymbolKind};

/// The largest adapter file read (a real adapter is a few MiB).
const MAX_FILE_BYTES: u64 = 256 * 1024 * 1024;
/// The marker's size in the file.
const MARKER_BYTES: usize = std::mem::size_of::<Marker>();

/// The marker of `file`, read without loading it, or why the file is refused.
pub fn inspect(file: &Path) -> Result<Marker, String> {
    trusted_location(file)?;
    // Read lazily: only the headers, the symbol tables and the marker's section are read, not
    // the whole (in a debug build, tens of MiB) library.
    let opened = std::fs::File::open(file).map_err(|e| format!("cannot read it: {e}"))?;
    let cache = object::ReadCache::new(Blocks::new(opened));
    let (bytes, endian) = match object::FileKind::parse(&cache) {
        Ok(object::FileKind::Elf64) => elf_marker::<FileHeader64<Endianness>>(&cache)?,
        Ok(object::FileKind::Elf32) => elf_marker::<FileHeader32<Endianness>>(&cache)?,
        _ => any_marker(&cache)?,
    };
    let marker = parse(bytes, endian)?;
    if marker.panic_unwind != 1 {
        return Err(
            "built with panic = \"abort\": a panic in it would end the host's process; build it with panic = \"unwind\" (the default)".into(),
        );
    }
    Ok(marker)
}

/// The marker's bytes in an ELF library, read by hand from its headers, its dynamic symbol
/// table and the marker's own 32 bytes. (`object::File` parses every symbol table when it opens
/// a file: for a library with debug symbols, a third of a millisecond on every hook that loads
/// an adapter. An exported marker is in the dynamic symbols, a few dozen entries.) The checks
/// and their messages are those of [`any_marker`], which reads the other formats.
fn elf_marker<Elf: FileHeader<Endian = Endianness>>(
    data: &object::ReadCache<Blocks>,
) -> Result<(&[u8], Endianness), String> {
    use object::read::elf::{SectionHeader as _, Sym as _};
    let header = Elf::parse(data).map_err(|_| not_library())?;
    let endian = header.endian().map_err(|_| not_library())?;
    let kind = match header.e_type(endian) {
        elf::ET_REL => object::ObjectKind::Relocatable,
        elf::ET_EXEC => object::ObjectKind::Executable,
        elf::ET_DYN => object::ObjectKind::Dynamic,
        elf::ET_CORE => object::ObjectKind::Core,
        _ => object::ObjectKind::Unknown,
    };
    check_kind(kind)?;
    let architecture = match header.e_machine(endian) {
        elf::EM_X86_64 => object::Architecture::X86_64,
        elf::EM_AARCH64 if header.is_class_64() => object::Architecture::Aarch64,
        elf::EM_386 => object::Architecture::I386,
        elf::EM_ARM => object::Architecture::Arm,
        elf::EM_RISCV if header.is_class_64() => object::Architecture::Riscv64,
        _ => object::Architecture::Unknown,
    };
    check_platform(object::BinaryFormat::Elf, architecture)?;
    let sections = header.sections(endian, data).map_err(|_| not_library())?;
    // The exported symbols first; the full table only for a file without the marker there.
    let mut found = None;
    for table in [elf::SHT_DYNSYM, elf::SHT_SYMTAB] {
        let symbols = sections
            .symbols(endian, data, table)
            .map_err(|_| not_library())?;
        found = symbols.iter().enumerate().find_map(|(index, symbol)| {
            let name = symbol.name(endian, symbols.strings()).ok()?;
            let name = std::str::from_utf8(name).ok()?;
            (name.trim_start_matches('_') == MARKER_SYMBOL).then(|| {
                let section = symbols.symbol_section(endian, symbol, SymbolIndex(index));
                (symbol, section)
            })
        });
        if found.is_some() {
            break;
        }
    }
    let (symbol, section) = found.ok_or_else(no_marker)?;
    let kind = match symbol.st_type() {
        elf::STT_OBJECT | elf::STT_COMMON => SymbolKind::Data,
        elf::STT_FUNC | elf::STT_GNU_IFUNC => SymbolKind::Text,
        elf::STT_SECTION => SymbolKind::Section,
        elf::STT_FILE => SymbolKind::File,
        elf::STT_TLS => SymbolKind::Tls,
        _ => SymbolKind::Unknown,
    };
    check_symbol(kind, symbol.st_size(endian).into())?;
    let index = section.ok().flatten().ok_or_else(unreadable)?;
    let section = sections.section(index).map_err(|_| unreadable())?;
    if section.sh_type(endian) == elf::SHT_NOBITS {
        return Err(unreadable());
    }
    let within = Into::<u64>::into(symbol.st_value(endian))
        .checked_sub(section.sh_addr(endian).into())
        .filter(|at| at.saturating_add(MARKER_BYTES as u64) <= section.sh_size(endian).into())
        .ok_or_else(unreadable)?;
    let offset = Into::<u64>::into(section.sh_offset(endian))
        .checked_add(within)
        .ok_or_else(unreadable)?;
    let bytes = data
        .read_bytes_at(offset, MARKER_BYTES as u64)
        .map_err(|_| unreadable())?;
    Ok((bytes, endian))
}

/// The marker's bytes in a library of any format `object` reads (Mach-O on macOS).
fn any_marker(data: &object::ReadCache<Blocks>) -> Result<(&[u8], Endianness), String> {
    let object = object::File::parse(data).map_err(|_| not_library())?;
    check_kind(object.kind())?;
    check_platform(object.format(), object.architecture())?;
    let symbol = object
        .dynamic_symbols()
        .chain(object.symbols())
        .find(|s| {
            s.name()
                .is_ok_and(|n| n.trim_start_matches('_') == MARKER_SYMBOL)
        })
        .ok_or_else(no_marker)?;
    check_symbol(symbol.kind(), symbol.size())?;
    Ok((marker_bytes(&object, &symbol)?, object.endianness()))
}

fn not_library() -> String {
    "not a shared library (no object file format ACC reads)".into()
}

fn no_marker() -> String {
    format!(
        "not an ACC adapter: it has no {MARKER_SYMBOL} marker (adapters built with adapter-api 1.2 or later have one; rebuild it)"
    )
}

fn unreadable() -> String {
    format!("not an ACC adapter: its {MARKER_SYMBOL} marker is not readable")
}

/// A shared library, not an object file, executable or core dump.
fn check_kind(kind: object::ObjectKind) -> Result<(), String> {
    if kind == object::ObjectKind::Dynamic {
        Ok(())
    } else {
        Err(format!("not a shared library (a {kind:?} object file)"))
    }
}

/// Built for this host's object format and architecture.
fn check_platform(
    format: object::BinaryFormat,
    architecture: object::Architecture,
) -> Result<(), String> {
    let (host_format, host_architecture) = here();
    if format == host_format && architecture == host_architecture {
        Ok(())
    } else {
        Err(format!(
            "built for another platform ({format:?} {architecture:?}; this host is {host_format:?} {host_architecture:?})"
        ))
    }
}

/// The marker symbol is data of the marker's size (0: a size the file does not state).
fn check_symbol(kind: SymbolKind, size: u64) -> Result<(), String> {
    if kind != SymbolKind::Data {
        return Err(format!(
            "not an ACC adapter: {MARKER_SYMBOL} is a {kind:?} symbol, not the marker's data"
        ));
    }
    if size != 0 && size != MARKER_BYTES as u64 {
        return Err(format!(
            "not an ACC adapter: its {MARKER_SYMBOL} is {size} bytes, not {MARKER_BYTES}"
        ));
    }
    Ok(())
}

/// A file read in blocks of `BLOCK` bytes, each read once. The object parser asks for symbol
/// names 256 bytes at a time, each after a seek: straight from the file that was some 140
/// system calls on every hook that loads an adapter; from blocks it is a handful of reads.
/// (`std::io::BufReader` drops its buffer on every seek, so it does not help here.)
struct Blocks {
    file: std::fs::File,
    len: u64,
    position: u64,
    blocks: std::collections::HashMap<u64, Vec<u8>>,
}

/// The block size.
const BLOCK: u64 = 64 * 1024;

impl Blocks {
    fn new(file: std::fs::File) -> Self {
        let len = file.metadata().map(|m| m.len()).unwrap_or(0);
        Self {
            file,
            len,
            position: 0,
            blocks: std::collections::HashMap::new(),
        }
    }

    /// The block holding `position`, read from the file the first time.
    fn block(&mut self, index: u64) -> std::io::Result<&[u8]> {
        use std::os::unix::fs::FileExt;
        if !self.blocks.contains_key(&index) {
            let start = index * BLOCK;
            let size = usize::try_from(BLOCK.min(self.len.saturating_sub(start))).unwrap_or(0);
            let mut bytes = vec![0; size];
            self.file.read_exact_at(&mut bytes, start)?;
            self.blocks.insert(index, bytes);
        }
        Ok(self.blocks.get(&index).map_or(&[][..], Vec::as_slice))
    }
}

impl std::io::Read for Blocks {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.position >= self.len || buf.is_empty() {
            return Ok(0);
        }
        let position = self.position;
        let block = self.block(position / BLOCK)?;
        let offset = usize::try_from(position % BLOCK).unwrap_or(usize::MAX);
        let available = block.get(offset..).unwrap_or_default();
        let n = available.len().min(buf.len());
        buf[..n].copy_from_slice(&available[..n]);
        self.position += n as u64;
        Ok(n)
    }
}

impl std::io::Seek for Blocks {
    fn seek(&mut self, to: std::io::SeekFrom) -> std::io::Result<u64> {
        let target = match to {
            std::io::SeekFrom::Start(at) => Some(at),
            std::io::SeekFrom::End(delta) => self.len.checked_add_signed(delta),
            std::io::SeekFrom::Current(delta) => self.position.checked_add_signed(delta),
        };
        self.position = target.ok_or_else(|| {
            std::io::Error::new(std::io::ErrorKind::InvalidInput, "seek before the start")
        })?;
        Ok(self.position)
    }
}

/// The object format and architecture of this host.
fn here() -> (object::BinaryFormat, object::Architecture) {
    let format = if cfg!(target_os = "macos") {
        object::BinaryFormat::MachO
    } else {
        object::BinaryFormat::Elf
    };
    let architecture = match std::env::consts::ARCH {
        "x86_64" => object::Architecture::X86_64,
        "aarch64" => object::Architecture::Aarch64,
        "x86" => object::Architecture::I386,
        "arm" => object::Architecture::Arm,
        "riscv64" => object::Architecture::Riscv64,
        _ => object::Architecture::Unknown,
    };
    (format, architecture)
}

/// A regular file in a directory, neither writable by group or others nor owned by someone
/// other than this user or root.
fn trusted_location(file: &Path) -> Result<(), String> {
    let me = rustix::process::geteuid().as_raw();
    let meta = std::fs::metadata(file).map_err(|e| format!("cannot read it: {e}"))?;
    if !meta.is_file() {
        return Err("not a regular file".into());
    }
    if meta.len() > MAX_FILE_BYTES {
        return Err(format!(
            "larger than {} MiB: not an adapter",
            MAX_FILE_BYTES / 1024 / 1024
        ));
    }
    let dir = file.parent().unwrap_or_else(|| Path::new("."));
    let dir_meta = std::fs::metadata(dir).map_err(|e| format!("cannot read its directory: {e}"))?;
    for (what, meta) in [("the file", &meta), ("its directory", &dir_meta)] {
        if meta.mode() & 0o022 != 0 {
            return Err(format!(
                "{what} is writable by group or others (mode {:o}): anyone could replace the code acc would run",
                meta.mode() & 0o7777
            ));
        }
        if meta.uid() != me && meta.uid() != 0 {
            return Err(format!(
                "{what} belongs to user {}, not to you or root",
                meta.uid()
            ));
        }
    }
    Ok(())
}

/// The marker's bytes, from the section holding the symbol.
fn marker_bytes<'a, R: object::ReadRef<'a>>(
    object: &object::File<'a, R>,
    symbol: &object::Symbol<'a, '_, R>,
) -> Result<&'a [u8], String> {
    let index = symbol.section_index().ok_or_else(unreadable)?;
    let section = object.section_by_index(index).map_err(|_| unreadable())?;
    let data = section.data().map_err(|_| unreadable())?;
    let start = symbol
        .address()
        .checked_sub(section.address())
        .and_then(|o| usize::try_from(o).ok())
        .ok_or_else(unreadable)?;
    data.get(start..start + MARKER_BYTES).ok_or_else(unreadable)
}

/// A marker from its bytes.
fn parse(bytes: &[u8], endian: Endianness) -> Result<Marker, String> {
    let word = |at: usize| {
        let mut four = [0u8; 4];
        four.copy_from_slice(&bytes[at..at + 4]);
        match endian {
            Endianness::Little => u32::from_le_bytes(four),
            Endianness::Big => u32::from_be_bytes(four),
        }
    };
    let mut magic = [0u8; 8];
    magic.copy_from_slice(&bytes[..8]);
    if magic != MARKER_MAGIC {
        return Err(format!(
            "not an ACC adapter: its {MARKER_SYMBOL} does not hold ACC's marker"
        ));
    }
    Ok(Marker {
        magic,
        version: AbiVersion {
            abi_major: word(8),
            api_major: word(12),
            api_minor: word(16),
            api_patch: word(20),
        },
        panic_unwind: word(24),
        reserved: word(28),
    })
}
