//! From a layer blob to its tar stream: gzip (flate2 on zlib-rs), zstd, or
//! uncompressed, chosen by media type. The media type is what the manifest
//! declares; a blob whose bytes disagree with it fails in the decoder, and
//! the wrapped verifying reader still checks the blob's digest.

use super::ImageError;
use std::io::Read;

/// How a layer blob is compressed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Compression {
    None,
    Gzip,
    Zstd,
}

impl Compression {
    /// The compression a layer media type declares, if we know the type.
    pub(crate) fn of_media_type(media_type: &str) -> Option<Compression> {
        let base = media_type.split(';').next().unwrap_or(media_type).trim();
        // OCI: ...layer.v1.tar[+gzip|+zstd], also the nondistributable
        // variants; Docker: ...rootfs.diff.tar[.gzip|.zstd] and the foreign
        // layer type.
        let is_layer =
            base.starts_with("application/vnd.oci.image.layer.") || base.starts_with("application/vnd.docker.image.rootfs.") || base == "application/x-tar";
        if !is_layer {
            return None;
        }
        Some(if base.ends_with("+gzip") || base.ends_with(".gzip") {
            Compression::Gzip
        } else if base.ends_with("+zstd") || base.ends_with(".zstd") {
            Compression::Zstd
        } else if base.ends_with(".tar") || base.ends_with("tar") {
            Compression::None
        } else {
            return None;
        })
    }
}

/// Bytes of a compressed blob read at once.
const BLOB_BUFFER: usize = 1 << 18;

/// Wrap a (verified) layer blob stream so it yields the uncompressed tar.
pub(crate) fn tar_stream<'a>(reference: &str, media_type: &str, blob: Box<dyn Read + Send + 'a>) -> Result<Box<dyn Read + Send + 'a>, ImageError> {
    match Compression::of_media_type(media_type) {
        Some(Compression::None) => Ok(blob),
        // read the blob in large pieces: fewer reads, and longer runs on inflate's fast path
        Some(Compression::Gzip) => Ok(Box::new(flate2::bufread::MultiGzDecoder::new(std::io::BufReader::with_capacity(BLOB_BUFFER, blob)))),
        Some(Compression::Zstd) => zstd::stream::read::Decoder::new(blob).map(|d| Box::new(d) as Box<dyn Read + Send + 'a>).map_err(|e| ImageError::Io {
            reference: reference.to_string(),
            context: "starting the zstd decoder".into(),
            source: e,
        }),
        None => Err(ImageError::Unsupported { reference: reference.to_string(), what: format!("layer media type {media_type}") }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn media_types() {
        use Compression::*;
        for (mt, c) in [
            ("application/vnd.oci.image.layer.v1.tar", Some(None)),
            ("application/vnd.oci.image.layer.v1.tar+gzip", Some(Gzip)),
            ("application/vnd.oci.image.layer.v1.tar+zstd", Some(Zstd)),
            ("application/vnd.oci.image.layer.nondistributable.v1.tar+gzip", Some(Gzip)),
            ("application/vnd.docker.image.rootfs.diff.tar.gzip", Some(Gzip)),
            ("application/vnd.docker.image.rootfs.foreign.diff.tar.gzip", Some(Gzip)),
            ("application/vnd.docker.image.rootfs.diff.tar", Some(None)),
            ("application/vnd.oci.image.config.v1+json", Option::None),
            ("application/vnd.oci.image.layer.v1.tar+lz4", Option::None),
        ] {
            assert_eq!(Compression::of_media_type(mt), c, "{mt}");
        }
    }

    fn roundtrip(media_type: &str, blob: Vec<u8>) -> Vec<u8> {
        let mut out = Vec::new();
        tar_stream("r", media_type, Box::new(std::io::Cursor::new(blob))).unwrap().read_to_end(&mut out).unwrap();
        out
    }

    #[test]
    fn decodes_gzip_zstd_and_plain() {
        let data = b"tar bytes ".repeat(1000);
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(&data).unwrap();
        assert_eq!(roundtrip("application/vnd.oci.image.layer.v1.tar+gzip", gz.finish().unwrap()), data);
        assert_eq!(roundtrip("application/vnd.oci.image.layer.v1.tar+zstd", zstd::encode_all(&data[..], 3).unwrap()), data);
        assert_eq!(roundtrip("application/vnd.oci.image.layer.v1.tar", data.clone()), data);
        let mut out = Vec::new();
        let mut bad = tar_stream("r", "application/vnd.oci.image.layer.v1.tar+gzip", Box::new(&b"not gzip"[..])).unwrap();
        assert!(bad.read_to_end(&mut out).is_err());
        assert!(matches!(tar_stream("r", "text/plain", Box::new(&b""[..])), Err(ImageError::Unsupported { .. })));
    }
}
