//! The crate's one tar reader — for image layers, bundle archives and
//! engine exports — which never allocates by what the archive claims.
//! The `tar` crate reads PAX and GNU long-name headers whole into memory,
//! so one crafted header can ask for gigabytes; here an extension header
//! over [`MAX_EXTENSION`] is streamed past unread and the entry it belongs
//! to says so ([`Header::unread`]), so the caller reports that entry and
//! the walk goes on; file data is only ever handed out through a
//! caller-sized buffer. It knows what tars use: ustar/GNU/PAX headers, base-256 numbers, `L`/`K` long names and
//! `x` records for path, linkpath, size, uid and gid. GNU sparse files are
//! refused (no image builder writes them). PAX times are checked the way
//! Go's `archive/tar` (what Docker and containerd extract with) checks
//! them: a layer with a time that is not a number is refused by a runtime,
//! and here it is an error. Errors name the byte offset of the header, and
//! [`TarReader::entry_end`] says how far into the stream the current
//! entry's data reaches, so a caller can refuse an entry before reading it.

use std::io::{self, Read};

/// Largest PAX or GNU long-name header accepted.
const MAX_EXTENSION: u64 = 1 << 20;

/// The type of an entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum EntryType {
    File,
    Hardlink,
    Symlink,
    Char,
    Block,
    Dir,
    Fifo,
    /// A type flag no layer uses (GNU volume labels, vendor types, ...):
    /// its data is skipped.
    Other(u8),
}

impl EntryType {
    /// The type flag Go reports for the kind (`0` for any regular file).
    pub(crate) fn flag(self) -> u8 {
        match self {
            EntryType::File => b'0',
            EntryType::Hardlink => b'1',
            EntryType::Symlink => b'2',
            EntryType::Char => b'3',
            EntryType::Block => b'4',
            EntryType::Dir => b'5',
            EntryType::Fifo => b'6',
            EntryType::Other(flag) => flag,
        }
    }

    /// The kind of entry, for a message.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            EntryType::File => "file",
            EntryType::Hardlink => "hard link",
            EntryType::Symlink => "symlink",
            EntryType::Char => "character device",
            EntryType::Block => "block device",
            EntryType::Dir => "directory",
            EntryType::Fifo => "FIFO",
            EntryType::Other(_) => "vendor-type",
        }
    }
}

/// One entry's header, with PAX and GNU extensions applied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Header {
    pub path: Vec<u8>,
    pub link: Vec<u8>,
    pub kind: EntryType,
    pub mode: u32,
    pub uid: u64,
    pub gid: u64,
    /// Bytes of data that follow (0 for anything but a file).
    pub size: u64,
    /// An extension header of this entry too large to read: its name,
    /// link name or PAX records may be missing from `path` and `link`.
    pub unread: Option<Unread>,
    /// Where tar readers read this header differently: the other reading,
    /// for a `hostile-entry` finding. The header itself is read as Go's
    /// `archive/tar` (what containerd and Docker extract with) reads it.
    pub disagreement: Option<String>,
}

/// An extension header streamed past without being read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Unread {
    /// Its type flag: `L` long name, `K` long link name, `x`/`g` PAX records.
    pub flag: u8,
    pub size: u64,
}

impl std::fmt::Display for Unread {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let what = match self.flag {
            b'L' => "a GNU long name",
            b'K' => "a GNU long link name",
            b'g' => "global PAX records",
            _ => "PAX records",
        };
        write!(f, "its tar header carries {what} of {} bytes, over the {MAX_EXTENSION} read: its real name is not known", self.size)
    }
}

/// Reads entries one after the other; the data of an entry must be read
/// (or is skipped) before the next header.
pub(crate) struct TarReader<R> {
    inner: R,
    /// Data bytes of the current entry not yet read.
    remaining: u64,
    /// Padding after the current entry's data.
    padding: u64,
    /// Bytes consumed from `inner` so far.
    position: u64,
}

fn invalid(msg: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, msg)
}

impl<R: Read> TarReader<R> {
    pub(crate) fn new(inner: R) -> Self {
        TarReader { inner, remaining: 0, padding: 0, position: 0 }
    }

    /// The next entry's header; `None` at the end-of-archive marker (or a
    /// clean end of stream where a header would start).
    pub(crate) fn next_header(&mut self) -> io::Result<Option<Header>> {
        self.skip_rest()?;
        let mut long_path: Option<Vec<u8>> = None;
        let mut long_link: Option<Vec<u8>> = None;
        let mut pax: Vec<(String, Vec<u8>)> = Vec::new();
        let mut unread = None;
        // where the entry starts: its first extension header, if any
        let start = self.position;
        loop {
            let at = self.position;
            let Some(block) = self.read_block()? else { return Ok(None) };
            if block.iter().all(|&b| b == 0) {
                // Go ends at two zero blocks (or one and the stream's end) and
                // refuses a header after a lone one; tar(1) stops at the first.
                return match self.read_block()? {
                    Some(next) if next.iter().any(|&b| b != 0) => Err(invalid(format!(
                        "tar header at byte {}: a header after a lone zero block at byte {at}: Go's archive/tar (containerd, Docker) refuses the layer there, tar(1) ends the archive at the zero block",
                        at + 512
                    ))),
                    _ => Ok(None),
                };
            }
            let invalid = |msg: String| invalid(format!("tar header at byte {at}: {msg}"));
            verify_checksum(&block).map_err(invalid)?;
            go_numeric_fields(&block).map_err(invalid)?;
            let size = number(&block[124..136]).ok_or_else(|| invalid("bad size field".into()))?;
            let flag = block[156];
            match flag {
                b'x' | b'g' | b'L' | b'K' => {
                    if size > MAX_EXTENSION {
                        // streamed past, never held: the entry it belongs to says so
                        self.remaining = size;
                        self.padding = (512 - size % 512) % 512;
                        self.skip_rest()?;
                        unread = Some(Unread { flag, size });
                        continue;
                    }
                    let data = self.read_exact_vec(size)?;
                    match flag {
                        b'x' => pax = parse_pax(&data).map_err(invalid)?,
                        b'L' => long_path = Some(trim_nul(&data).to_vec()),
                        b'K' => long_link = Some(trim_nul(&data).to_vec()),
                        _ => {} // global PAX records set nothing a layer walk reads
                    }
                    continue;
                }
                b'S' => return Err(invalid("GNU sparse entries are not supported".into())),
                _ => {}
            }
            let kind = match flag {
                b'0' | 0 | b'7' => EntryType::File,
                b'1' => EntryType::Hardlink,
                b'2' => EntryType::Symlink,
                b'3' => EntryType::Char,
                b'4' => EntryType::Block,
                b'5' => EntryType::Dir,
                b'6' => EntryType::Fifo,
                other => EntryType::Other(other),
            };
            let (path, other_prefix) = ustar_path(&block);
            let mut header = Header {
                path,
                link: trim_nul(&block[157..257]).to_vec(),
                kind,
                mode: number(&block[100..108]).unwrap_or(0) as u32 & 0o7777,
                uid: number(&block[108..116]).unwrap_or(0),
                gid: number(&block[116..124]).unwrap_or(0),
                size,
                unread,
                disagreement: None,
            };
            let mut disagree: Vec<String> = Vec::new();
            if let Some(other) = other_prefix {
                disagree.push(format!(
                    "a star header: its 131-byte prefix gives {}, a reader taking the ustar 155-byte prefix reads {}",
                    shown(&header.path),
                    shown(&other)
                ));
            }
            // PAX first, then GNU long names over them, as Go merges them;
            // an empty PAX value keeps the header's.
            let (mut pax_path, mut pax_link) = (false, false);
            for (key, value) in pax {
                let text = String::from_utf8_lossy(&value);
                let bad = || self::invalid(format!("tar entry at byte {start}: PAX record {}={:?} is not a number", clip(&key), clip(&text)));
                let num = || text.parse::<u64>().map_err(|_| bad());
                match key.as_str() {
                    "path" | "linkpath" if value.is_empty() => {
                        disagree.push(format!("an empty PAX {key} record: Go keeps the header's value, a reader that applies it reads an empty name"))
                    }
                    _ if value.is_empty() => {}
                    "path" => (header.path, pax_path) = (value, true),
                    "linkpath" => (header.link, pax_link) = (value, true),
                    "size" => header.size = num()?,
                    "uid" => header.uid = num()?,
                    "gid" => header.gid = num()?,
                    "mtime" | "atime" | "ctime" if !is_pax_time(&text) => return Err(bad()),
                    _ => {}
                }
            }
            // An empty GNU long name keeps the header's, as Go takes it.
            for (long, field, by_pax, key, what) in
                [(long_path, &mut header.path, pax_path, "path", "name"), (long_link, &mut header.link, pax_link, "linkpath", "link name")]
            {
                if let Some(long) = long.filter(|l| !l.is_empty()) {
                    if by_pax && *field != long {
                        disagree.push(format!(
                            "a GNU long {what} {} beside a PAX {key} {}: Go takes the GNU one, readers that let PAX win take the other",
                            shown(&long),
                            shown(field)
                        ));
                    }
                    *field = long;
                }
            }
            // An old-style regular file named with a trailing slash is a directory.
            if flag == 0 && header.path.ends_with(b"/") {
                header.kind = EntryType::Dir;
            }
            // Data follows only for files: Go reads none for a link, device,
            // directory or FIFO whatever its size field says.
            let data = match header.kind {
                EntryType::Hardlink | EntryType::Symlink | EntryType::Char | EntryType::Block | EntryType::Dir | EntryType::Fifo => 0,
                _ => header.size,
            };
            if data != header.size {
                disagree.push(format!(
                    "a {} entry with a size field of {} bytes: Go reads no data for it and the next header follows at once, a reader that honours the size skips those bytes",
                    header.kind.as_str(),
                    header.size
                ));
            }
            self.remaining = data;
            self.padding = (512 - data % 512) % 512;
            if header.kind != EntryType::File {
                header.size = 0;
            }
            header.disagreement = (!disagree.is_empty()).then(|| disagree.join("; "));
            return Ok(Some(header));
        }
    }

    /// Read the current entry's data into `buf`; `Ok(0)` at its end.
    pub(crate) fn read_data(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.remaining == 0 || buf.is_empty() {
            return Ok(0);
        }
        let want = buf.len().min(usize::try_from(self.remaining).unwrap_or(usize::MAX));
        let n = self.inner.read(&mut buf[..want])?;
        if n == 0 {
            return Err(io::Error::new(io::ErrorKind::UnexpectedEof, "tar entry data cut short"));
        }
        self.remaining -= n as u64;
        self.position += n as u64;
        Ok(n)
    }

    /// The current entry's data as a reader (its end is the entry's end).
    pub(crate) fn data(&mut self) -> Data<'_, R> {
        Data(self)
    }

    /// Bytes read from the stream so far.
    pub(crate) fn position(&self) -> u64 {
        self.position
    }

    /// Where the current entry's data (and its padding) ends in the
    /// stream: reading or skipping it consumes the stream up to here.
    pub(crate) fn entry_end(&self) -> u64 {
        self.position.saturating_add(self.remaining).saturating_add(self.padding)
    }

    /// The underlying stream, borrowed: after the end marker, what follows
    /// it can be read (a verifying reader below checks at its end).
    pub(crate) fn inner_mut(&mut self) -> &mut R {
        &mut self.inner
    }

    /// The underlying stream, once the end marker was read: drain it so a
    /// verifying reader below sees EOF.
    pub(crate) fn into_inner(self) -> R {
        self.inner
    }

    /// Skip what is left of the entry's data and its padding. Data cut
    /// short is an error; a stream that ends inside the padding ends the
    /// archive there, as Go's reader takes it (its `tryReadFull`).
    fn skip_rest(&mut self) -> io::Result<()> {
        let n = self.remaining + self.padding;
        if n > 0 {
            let copied = io::copy(&mut (&mut self.inner).take(n), &mut io::sink())?;
            self.position += copied;
            if copied < self.remaining {
                return Err(io::Error::new(io::ErrorKind::UnexpectedEof, "tar entry data cut short"));
            }
        }
        self.remaining = 0;
        self.padding = 0;
        Ok(())
    }

    fn read_block(&mut self) -> io::Result<Option<[u8; 512]>> {
        let mut block = [0u8; 512];
        let mut filled = 0;
        while filled < 512 {
            match self.inner.read(&mut block[filled..]) {
                Ok(0) if filled == 0 => return Ok(None),
                Ok(0) => return Err(io::Error::new(io::ErrorKind::UnexpectedEof, "tar header cut short")),
                Ok(n) => filled += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        self.position += 512;
        Ok(Some(block))
    }

    fn read_exact_vec(&mut self, size: u64) -> io::Result<Vec<u8>> {
        let mut data = Vec::with_capacity(size as usize);
        (&mut self.inner).take(size).read_to_end(&mut data)?;
        self.position += data.len() as u64;
        if (data.len() as u64) < size {
            return Err(io::Error::new(io::ErrorKind::UnexpectedEof, "tar extension header cut short"));
        }
        self.padding = (512 - size % 512) % 512;
        self.skip_rest()?;
        Ok(data)
    }
}

/// The data of the current entry of a [`TarReader`].
pub(crate) struct Data<'a, R>(&'a mut TarReader<R>);

impl<R: Read> Read for Data<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.0.read_data(buf)
    }
}

/// One entry as a reader hands it out, in the form `tests/tools/gotar`
/// lists Go's reading: name and link bytes in hex, the type flag (`b'0'`
/// for any regular file), and the length and SHA-256 of the data it yields.
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize)]
pub struct Listed {
    pub name: String,
    pub link: String,
    #[serde(rename = "type")]
    pub kind: u8,
    pub len: u64,
    pub sha256: String,
}

/// How this reader lists a whole archive: its entries, and the error it
/// stopped on, if any. The differential tests and the fuzz target compare
/// it with Go's listing of the same bytes.
pub fn listing(archive: &[u8]) -> (Vec<Listed>, Option<String>) {
    use sha2::{Digest, Sha256};
    let mut reader = TarReader::new(archive);
    let mut out = Vec::new();
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let header = match reader.next_header() {
            Ok(Some(h)) => h,
            Ok(None) => return (out, None),
            Err(e) => return (out, Some(e.to_string())),
        };
        let (mut sha, mut len) = (Sha256::new(), 0u64);
        loop {
            match reader.read_data(&mut buf) {
                Ok(0) => break,
                Ok(n) => {
                    sha.update(&buf[..n]);
                    len += n as u64;
                }
                Err(e) => return (out, Some(e.to_string())),
            }
        }
        let kind = header.kind.flag();
        let hex = |bytes: &[u8]| bytes.iter().map(|b| format!("{b:02x}")).collect::<String>();
        out.push(Listed { name: hex(&header.path), link: hex(&header.link), kind, len, sha256: format!("{:x}", sha.finalize()) });
    }
}

fn trim_nul(bytes: &[u8]) -> &[u8] {
    let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
    &bytes[..end]
}

/// `prefix/name` of a ustar header (`name` alone for old and GNU headers),
/// as Go reads it: a star header (ustar magic and the `tar\0` trailer) has
/// a 131-byte prefix, a ustar one 155. For a star header whose longer
/// reading differs, that path too.
fn ustar_path(block: &[u8; 512]) -> (Vec<u8>, Option<Vec<u8>>) {
    let name = trim_nul(&block[0..100]);
    let joined = |prefix: &[u8]| match prefix.is_empty() {
        true => name.to_vec(),
        false => [prefix, b"/", name].concat(),
    };
    if &block[257..263] != b"ustar\0" {
        return (name.to_vec(), None);
    }
    let ustar = joined(trim_nul(&block[345..500]));
    if &block[508..512] != b"tar\0" {
        return (ustar, None);
    }
    let star = joined(trim_nul(&block[345..476]));
    let other = (star != ustar).then_some(ustar);
    (star, other)
}

/// A name for a message: lossy UTF-8, quoted, its last 96 characters
/// (where two readings of a path differ, they differ at the end).
fn shown(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    let count = text.chars().count();
    match count > 96 {
        true => format!("\"…{}\"", text.chars().skip(count - 96).collect::<String>().escape_debug()),
        false => format!("{text:?}"),
    }
}

/// A numeric field as Go reads it ([`go_number`]), when it is not negative.
fn number(field: &[u8]) -> Option<u64> {
    go_number(field).and_then(|n| u64::try_from(n).ok())
}

/// Go's `archive/tar` refuses a header (and a runtime the layer) when a
/// numeric field it parses is not a number: mode, uid, gid, size and mtime
/// of every header, the device numbers of ustar, GNU and star headers, and
/// the access and change times of star headers.
fn go_numeric_fields(block: &[u8; 512]) -> Result<(), String> {
    const ALWAYS: [(&str, usize, usize); 5] = [("mode", 100, 108), ("uid", 108, 116), ("gid", 116, 124), ("size", 124, 136), ("mtime", 136, 148)];
    const DEVICES: [(&str, usize, usize); 2] = [("devmajor", 329, 337), ("devminor", 337, 345)];
    const STAR_TIMES: [(&str, usize, usize); 2] = [("atime", 476, 488), ("ctime", 488, 500)];
    let magic = &block[257..263];
    let ustar = magic == b"ustar\0";
    let gnu = magic == b"ustar " && &block[263..265] == b" \0";
    let star = ustar && &block[508..512] == b"tar\0";
    let devices: &[(&str, usize, usize)] = if ustar || gnu { &DEVICES } else { &[] };
    let times: &[(&str, usize, usize)] = if star { &STAR_TIMES } else { &[] };
    for &(name, start, end) in ALWAYS.iter().chain(devices).chain(times) {
        if go_number(&block[start..end]).is_none() {
            return Err(format!("the {name} field {:?} is not a number (Go's archive/tar refuses the header)", String::from_utf8_lossy(&block[start..end])));
        }
    }
    Ok(())
}

/// A numeric field as Go parses it: base-256 when the high bit is set
/// (negative values allowed, at most 63 bits), else octal with spaces and
/// NULs trimmed around it and the text up to the first NUL inside.
fn go_number(field: &[u8]) -> Option<i64> {
    if field.first().is_some_and(|b| b & 0x80 != 0) {
        let inv = if field[0] & 0x40 != 0 { 0xff } else { 0 };
        let mut x: u64 = 0;
        for (i, &c) in field.iter().enumerate() {
            let c = if i == 0 { (c ^ inv) & 0x7f } else { c ^ inv };
            if x >> 56 > 0 {
                return None;
            }
            x = x << 8 | u64::from(c);
        }
        if x >> 63 > 0 {
            return None;
        }
        return Some(if inv == 0xff { !(x as i64) } else { x as i64 });
    }
    let start = field.iter().position(|&b| b != b' ' && b != 0).unwrap_or(field.len());
    let end = field.iter().rposition(|&b| b != b' ' && b != 0).map_or(start, |e| e + 1);
    let text = trim_nul(&field[start..end.max(start)]);
    if text.is_empty() {
        return Some(0);
    }
    let text = std::str::from_utf8(text).ok()?;
    u64::from_str_radix(text, 8).ok().map(|x| x as i64)
}

/// The stored checksum matches the header's sum of bytes, read unsigned or
/// signed (old tars summed signed chars; Go accepts either).
fn verify_checksum(block: &[u8; 512]) -> Result<(), String> {
    let stored = number(&block[148..156]).ok_or_else(|| "bad checksum field".to_string())?;
    // The checksum field counts as eight spaces.
    let sum = |byte: fn(u8) -> i64| -> i64 { block[..148].iter().chain(&block[156..]).map(|&b| byte(b)).sum::<i64>() + 8 * 32 };
    let unsigned = sum(i64::from);
    if i64::try_from(stored).is_ok_and(|s| s == unsigned || s == sum(|b| i64::from(b as i8))) {
        return Ok(());
    }
    Err(format!("checksum {stored} does not match {unsigned}: not a tar stream or corrupt"))
}

/// At most 64 characters of a bogus value, for an error message.
fn clip(text: &str) -> String {
    let mut out: String = text.chars().take(64).collect();
    if out.len() < text.len() {
        out.push('…');
    }
    out
}

/// A PAX time as Go's `archive/tar` accepts it: seconds that fit an i64,
/// optionally negative, optionally with a decimal fraction.
fn is_pax_time(text: &str) -> bool {
    let (secs, frac) = text.split_once('.').unwrap_or((text, ""));
    secs.parse::<i64>().is_ok() && !secs.starts_with('+') && frac.bytes().all(|b| b.is_ascii_digit())
}

/// PAX records: `<len> <key>=<value>\n`.
fn parse_pax(data: &[u8]) -> Result<Vec<(String, Vec<u8>)>, String> {
    let mut records = Vec::new();
    let mut rest = data;
    while !rest.is_empty() {
        let space = rest.iter().position(|&b| b == b' ').ok_or("PAX record without a length")?;
        let len: usize = std::str::from_utf8(&rest[..space]).ok().and_then(|s| s.parse().ok()).ok_or("PAX record length is not a number")?;
        if len < 5 || len <= space + 1 || len > rest.len() {
            return Err("PAX record length out of range".into());
        }
        // As Go's parsePAXRecord: a newline ends it, a non-empty key before
        // the first `=`, no NUL in a name's value or in any other key.
        let record = rest[space + 1..len].strip_suffix(b"\n").ok_or("PAX record not ended by a newline")?;
        let eq = record.iter().position(|&b| b == b'=').ok_or("PAX record without '='")?;
        let (key, value) = (&record[..eq], &record[eq + 1..]);
        let named = matches!(key, b"path" | b"linkpath" | b"uname" | b"gname");
        if key.is_empty() || (named && value.contains(&0)) || (!named && key.contains(&0)) {
            return Err("PAX record with an empty key or a NUL byte".into());
        }
        records.push((String::from_utf8_lossy(key).into_owned(), value.to_vec()));
        rest = &rest[len..];
    }
    Ok(records)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entries(archive: &[u8]) -> io::Result<Vec<(Header, Vec<u8>)>> {
        let mut r = TarReader::new(archive);
        let mut out = Vec::new();
        while let Some(h) = r.next_header()? {
            let mut data = Vec::new();
            let mut buf = [0u8; 7];
            loop {
                let n = r.read_data(&mut buf)?;
                if n == 0 {
                    break;
                }
                data.extend_from_slice(&buf[..n]);
            }
            out.push((h, data));
        }
        Ok(out)
    }

    fn build(f: impl FnOnce(&mut tar::Builder<Vec<u8>>)) -> Vec<u8> {
        let mut b = tar::Builder::new(Vec::new());
        f(&mut b);
        b.into_inner().unwrap()
    }

    fn header(kind: tar::EntryType, size: u64, mode: u32) -> tar::Header {
        let mut h = tar::Header::new_gnu();
        h.set_entry_type(kind);
        h.set_size(size);
        h.set_mode(mode);
        h.set_uid(1000);
        h.set_gid(1001);
        h
    }

    /// A ustar header block built by hand: `edit` may change any byte
    /// before the checksum is set.
    fn raw(name: &str, flag: u8, size: u64, edit: impl FnOnce(&mut [u8; 512])) -> Vec<u8> {
        let mut b = [0u8; 512];
        b[..name.len()].copy_from_slice(name.as_bytes());
        b[100..107].copy_from_slice(b"0000644");
        b[124..135].copy_from_slice(format!("{size:011o}").as_bytes());
        b[156] = flag;
        b[257..263].copy_from_slice(b"ustar\0");
        b[263..265].copy_from_slice(b"00");
        edit(&mut b);
        let sum: u32 = b.iter().enumerate().map(|(i, &x)| if (148..156).contains(&i) { 32 } else { u32::from(x) }).sum();
        b[148..155].copy_from_slice(format!("{sum:06o}\0").as_bytes());
        b.to_vec()
    }

    /// Data padded to whole blocks.
    fn padded(data: &[u8]) -> Vec<u8> {
        let mut out = data.to_vec();
        out.resize(data.len().div_ceil(512) * 512, 0);
        out
    }

    fn names(archive: &[u8]) -> Vec<(String, Option<String>)> {
        entries(archive).unwrap().into_iter().map(|(h, _)| (String::from_utf8_lossy(&h.path).into_owned(), h.disagreement)).collect()
    }

    /// A directory whose size field covers the next header: Go reads no
    /// data for it, so the entry inside those bytes is applied, and the
    /// disagreement is said.
    #[test]
    fn header_only_entries_have_no_data_whatever_their_size() {
        let hidden = [raw("sgl/x.py", b'0', 3, |_| {}), padded(b"bad")].concat();
        let archive = [raw("d/", b'5', hidden.len() as u64, |_| {}), hidden, raw("ok", b'0', 0, |_| {}), vec![0; 1024]].concat();
        let got = names(&archive);
        assert_eq!(got.iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>(), ["d/", "sgl/x.py", "ok"]);
        assert!(got[0].1.as_deref().unwrap().contains("directory entry with a size field of 1024 bytes"), "{got:?}");
        assert_eq!((got[1].1.as_ref(), got[2].1.as_ref()), (None, None));
        // An old-style file named with a slash is a directory, with no data either.
        let hidden = [raw("sgl/y.py", b'0', 0, |_| {})].concat();
        let archive = [raw("e/", 0, 512, |_| {}), hidden, vec![0; 1024]].concat();
        let e = entries(&archive).unwrap();
        assert_eq!((e[0].0.kind, String::from_utf8_lossy(&e[1].0.path).as_ref()), (EntryType::Dir, "sgl/y.py"));
    }

    /// A GNU long name and a PAX path on one entry: Go lets the GNU name win.
    #[test]
    fn a_gnu_long_name_wins_over_a_pax_path_and_the_clash_is_said() {
        let pax = b"24 path=usr/lib/up/a.py\n";
        let long = b"sgl/srt/server_args.py\0";
        let archive = [
            raw("././@PaxHeader", b'x', pax.len() as u64, |_| {}),
            padded(pax),
            raw("././@LongLink", b'L', long.len() as u64, |_| {}),
            padded(long),
            raw("short", b'0', 0, |_| {}),
            vec![0; 1024],
        ]
        .concat();
        let got = names(&archive);
        assert_eq!(got[0].0, "sgl/srt/server_args.py");
        assert!(got[0].1.as_deref().unwrap().contains("PAX path \"usr/lib/up/a.py\""), "{got:?}");
        // An empty PAX path keeps the header's name.
        let pax = b"8 path=\n";
        let archive = [raw("././@PaxHeader", b'x', pax.len() as u64, |_| {}), padded(pax), raw("kept", b'0', 0, |_| {}), vec![0; 1024]].concat();
        let got = names(&archive);
        assert_eq!(got[0].0, "kept");
        assert!(got[0].1.is_some());
    }

    /// A star header (the `tar\0` trailer) has a 131-byte prefix.
    #[test]
    fn a_star_header_has_the_short_prefix() {
        let star = |atime: &[u8; 12]| {
            let header = raw("x.py", b'0', 0, |b| {
                let prefix = "usr/lib/python3/dist-packages/sgl";
                b[345..345 + prefix.len()].copy_from_slice(prefix.as_bytes());
                b[345 + prefix.len()..476].fill(b'a');
                b[476..488].copy_from_slice(atime);
                b[508..512].copy_from_slice(b"tar\0");
            });
            [header, vec![0; 1024]].concat()
        };
        let got = names(&star(b"00000000017\0"));
        assert!(got[0].0.ends_with("aaaa/x.py") && got[0].0.len() == 131 + 5, "{got:?}");
        assert!(got[0].1.as_deref().unwrap().contains("aaa00000000017/x.py"), "{got:?}");
        // Star times that are not numbers: Go refuses the header, and so does the reader.
        let err = entries(&star(b"/hide/000000")).unwrap_err().to_string();
        assert!(err.contains("the atime field"), "{err}");
    }

    /// Signed checksums are accepted; a header after a lone zero block is refused.
    #[test]
    fn signed_checksums_and_lone_zero_blocks() {
        let mut block = raw("caf\u{e9}", b'0', 0, |_| {});
        let signed: i64 = block.iter().enumerate().map(|(i, &x)| if (148..156).contains(&i) { 32 } else { i64::from(x as i8) }).sum();
        block[148..155].copy_from_slice(format!("{signed:06o}\0").as_bytes());
        assert_eq!(names(&[block, vec![0; 1024]].concat())[0].0, "café");
        let hidden = [raw("a", b'0', 0, |_| {}), vec![0; 512], raw("sgl/x.py", b'0', 0, |_| {}), vec![0; 1024]].concat();
        let err = entries(&hidden).unwrap_err().to_string();
        assert!(err.contains("after a lone zero block"), "{err}");
        // One zero block and the stream's end is an end.
        assert_eq!(names(&[raw("a", b'0', 0, |_| {}), vec![0; 512]].concat()).len(), 1);
    }

    #[test]
    fn reads_files_dirs_links_and_long_names() {
        let long = format!("usr/lib/{}/x.py", "d".repeat(150));
        let archive = build(|b| {
            b.append_data(&mut header(tar::EntryType::Directory, 0, 0o755), "usr/", &[][..]).unwrap();
            b.append_data(&mut header(tar::EntryType::Regular, 11, 0o4755), "usr/a", &b"hello world"[..]).unwrap();
            b.append_data(&mut header(tar::EntryType::Regular, 3, 0o644), &long, &b"abc"[..]).unwrap();
            let mut l = header(tar::EntryType::Symlink, 0, 0o777);
            b.append_link(&mut l, "usr/s", "a".repeat(200)).unwrap();
            let mut h = header(tar::EntryType::Link, 0, 0o755);
            b.append_link(&mut h, "usr/h", "usr/a").unwrap();
        });
        let e = entries(&archive).unwrap();
        assert_eq!(e.len(), 5);
        assert_eq!((e[0].0.kind, e[0].0.path.as_slice()), (EntryType::Dir, &b"usr/"[..]));
        assert_eq!((e[1].0.mode, e[1].0.uid, e[1].0.gid, e[1].1.as_slice()), (0o4755, 1000, 1001, &b"hello world"[..]));
        assert_eq!(String::from_utf8_lossy(&e[2].0.path), long);
        assert_eq!((e[3].0.kind, e[3].0.link.len()), (EntryType::Symlink, 200));
        assert_eq!((e[4].0.kind, e[4].0.link.as_slice()), (EntryType::Hardlink, &b"usr/a"[..]));
    }

    #[test]
    fn pax_records_override_the_header() {
        let mut archive = build(|b| {
            b.append_pax_extensions([("path", &b"very/long/pax/path"[..]), ("uid", &b"4242"[..])]).unwrap();
            b.append_data(&mut header(tar::EntryType::Regular, 2, 0o644), "short", &b"hi"[..]).unwrap();
        });
        let e = entries(&archive).unwrap();
        assert_eq!((e[0].0.path.as_slice(), e[0].0.uid, e[0].1.as_slice()), (&b"very/long/pax/path"[..], 4242, &b"hi"[..]));
        // a corrupted header is refused, not misread
        archive[1024 + 5] ^= 0xff;
        assert!(entries(&archive).is_err());
    }

    #[test]
    fn huge_extension_headers_are_streamed_past_and_the_entry_says_so() {
        let ext = |flag: tar::EntryType, size: u64| {
            let mut h = header(flag, size, 0o644);
            h.set_path("././@LongLink").unwrap();
            h.set_cksum();
            let mut out = h.as_bytes().to_vec();
            out.resize(out.len() + size.div_ceil(512) as usize * 512, b'a');
            out
        };
        let mut archive = ext(tar::EntryType::GNULongName, MAX_EXTENSION + 1);
        archive.extend(build(|b| b.append_data(&mut header(tar::EntryType::Regular, 2, 0o644), "cut-name", &b"hi"[..]).unwrap()));
        let got = entries(&archive).unwrap();
        assert_eq!(got.len(), 1);
        let (h, data) = &got[0];
        assert_eq!((h.path.as_slice(), data.as_slice()), (&b"cut-name"[..], &b"hi"[..]));
        assert_eq!(h.unread, Some(Unread { flag: b'L', size: MAX_EXTENSION + 1 }));
        assert!(h.unread.unwrap().to_string().starts_with("its tar header carries a GNU long name of 1048577 bytes"));
        // a small one is read, and the entry has nothing unread
        let mut small = ext(tar::EntryType::GNULongName, 0);
        small.extend(build(|b| b.append_data(&mut header(tar::EntryType::Regular, 0, 0o644), "x", &[][..]).unwrap()));
        assert_eq!(entries(&small).unwrap()[0].0.unread, None);
        // one cut short is an error
        assert!(entries(&archive[..4096]).is_err());
    }

    #[test]
    fn truncation_is_an_error() {
        let full = build(|b| b.append_data(&mut header(tar::EntryType::Regular, 2000, 0o644), "f", &[7u8; 2000][..]).unwrap());
        assert!(entries(&full[..1200]).is_err());
        assert_eq!(entries(&[]).unwrap().len(), 0);
    }

    #[test]
    fn numbers_octal_and_base256() {
        assert_eq!(number(b"0000644\0"), Some(0o644));
        assert_eq!(number(b"  755 \0"), Some(0o755));
        assert_eq!(number(&[0x80, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0]), Some(2 << 16));
        assert_eq!(number(&[0xff, 0xff]), None);
    }
}
