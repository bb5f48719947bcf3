//! How many entries a zip's central directory declares, read from its
//! end-of-central-directory record (and the zip64 one) alone. The zip
//! reader loads the whole central directory before the first member can be
//! read, about 120 bytes per entry: a 1 GB zip of ten million empty
//! entries would cost more memory than any limit allows. Knowing the count
//! first lets the walker read such an archive from its local headers
//! instead, stopping at `--max-members`.

use std::io::{self, Read, Seek, SeekFrom};

/// End of central directory record signature, and its fixed size.
const EOCD: &[u8; 4] = b"PK\x05\x06";
const EOCD_LEN: u64 = 22;
/// The EOCD may be followed by a comment of at most this many bytes.
const MAX_COMMENT: u64 = u16::MAX as u64;
const ZIP64_LOCATOR: &[u8; 4] = b"PK\x06\x07";
const ZIP64_EOCD: &[u8; 4] = b"PK\x06\x06";

/// The entry count the archive declares, or `None` when no end record is
/// found (the zip reader then says what is wrong).
pub(crate) fn declared_entries<R: Read + Seek>(file: &mut R) -> io::Result<Option<u64>> {
    let len = file.seek(SeekFrom::End(0))?;
    let tail_len = len.min(EOCD_LEN + MAX_COMMENT);
    let tail_start = len - tail_len;
    let mut tail = vec![0; tail_len as usize];
    file.seek(SeekFrom::Start(tail_start))?;
    file.read_exact(&mut tail)?;
    let Some(at) = tail.windows(4).rposition(|w| w == EOCD).filter(|&at| at as u64 + EOCD_LEN <= tail_len) else {
        return Ok(None);
    };
    let entries = u64::from(u16::from_le_bytes([tail[at + 10], tail[at + 11]]));
    if entries != u64::from(u16::MAX) {
        return Ok(Some(entries));
    }
    // Zip64: the locator (20 bytes) sits right before the EOCD and points at the zip64 record.
    let eocd_at = tail_start + at as u64;
    let Some(locator_at) = eocd_at.checked_sub(20) else { return Ok(Some(entries)) };
    let mut locator = [0u8; 20];
    file.seek(SeekFrom::Start(locator_at))?;
    file.read_exact(&mut locator)?;
    if &locator[..4] != ZIP64_LOCATOR {
        return Ok(Some(entries));
    }
    let record_at = u64::from_le_bytes(locator[8..16].try_into().expect("8 bytes"));
    let mut record = [0u8; 40];
    if record_at.checked_add(40).is_none_or(|end| end > len) {
        return Ok(Some(entries));
    }
    file.seek(SeekFrom::Start(record_at))?;
    file.read_exact(&mut record)?;
    if &record[..4] != ZIP64_EOCD {
        return Ok(Some(entries));
    }
    Ok(Some(u64::from_le_bytes(record[32..40].try_into().expect("8 bytes"))))
}

#[cfg(test)]
mod tests {
    use super::declared_entries;
    use std::io::{Cursor, Write};

    fn zip_of(count: usize, zip64: bool) -> Vec<u8> {
        let mut zip = zip::ZipWriter::new(Cursor::new(Vec::new()));
        let options = zip::write::SimpleFileOptions::default().large_file(zip64);
        for i in 0..count {
            zip.start_file(format!("f{i}"), options).unwrap();
            zip.write_all(b"x").unwrap();
        }
        zip.set_comment("a comment after the end record").unwrap();
        zip.finish().unwrap().into_inner()
    }

    #[test]
    fn counts_plain_zip64_and_garbage() {
        assert_eq!(declared_entries(&mut Cursor::new(zip_of(3, false))).unwrap(), Some(3));
        assert_eq!(declared_entries(&mut Cursor::new(zip_of(70_000, false))).unwrap(), Some(70_000));
        assert_eq!(declared_entries(&mut Cursor::new(zip_of(2, true))).unwrap(), Some(2));
        assert_eq!(declared_entries(&mut Cursor::new(b"not a zip".to_vec())).unwrap(), None);
        assert_eq!(declared_entries(&mut Cursor::new(Vec::new())).unwrap(), None);
    }
}
