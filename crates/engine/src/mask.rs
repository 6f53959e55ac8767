//! The tokens masked values show instead of themselves: `hmac:<12 hex>`, the first 48
//! bits of an HMAC-SHA-256 of the value's canonical bytes under a key of the
//! deployment. The same value shows the same token under one key, so equal masked
//! values can still be recognised; without the key a token cannot be matched against
//! guesses, as an unkeyed hash of a phone number or a birth date can.
//!
//! Keys come from the deployment: a Secrets Manager secret in AWS (the template
//! creates it; `recon_aws::secrets`), a local key file for the CLI ([`MaskKey::local`]).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;

use crate::error::{ReconError, Result};

/// The environment variable naming the CLI's key file.
pub const MASK_KEY_FILE_ENV: &str = "GLUE_RECON_MASK_KEY_FILE";

/// The shortest key accepted, in bytes.
pub const MIN_KEY_BYTES: usize = 16;

/// Bytes of a key the CLI creates.
const NEW_KEY_BYTES: usize = 32;

/// A masking key. Its bytes never appear in `Debug` output.
#[derive(Clone)]
pub struct MaskKey(Arc<[u8]>);

impl std::fmt::Debug for MaskKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("MaskKey(..)")
    }
}

impl MaskKey {
    /// A key of these bytes; `from` names where they come from in the error for a key
    /// shorter than [`MIN_KEY_BYTES`].
    pub fn new(bytes: &[u8], from: &str) -> Result<MaskKey> {
        if bytes.len() < MIN_KEY_BYTES {
            return Err(ReconError::InvalidConfig {
                file: from.to_string(),
                message: format!(
                    "the masking key is {} bytes; it needs at least {MIN_KEY_BYTES}",
                    bytes.len()
                ),
            });
        }
        Ok(MaskKey(bytes.into()))
    }

    /// The token of a value's canonical bytes: `hmac:` and 12 hex digits.
    pub fn token(&self, canonical: &[u8]) -> String {
        let mut mac = <Hmac<Sha256> as KeyInit>::new_from_slice(&self.0)
            .expect("HMAC takes a key of any length");
        mac.update(canonical);
        let digest = mac.finalize().into_bytes();
        let hex: String = digest[..6].iter().map(|b| format!("{b:02x}")).collect();
        format!("hmac:{hex}")
    }

    /// The key in a file: its contents, white space at either end ignored.
    pub fn from_file(path: &Path) -> Result<MaskKey> {
        let bytes = std::fs::read(path).map_err(|source| ReconError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        MaskKey::new(bytes.trim_ascii(), &path.display().to_string())
    }

    /// The CLI's key: the file [`MASK_KEY_FILE_ENV`] names, else
    /// `$XDG_CONFIG_HOME/glue-recon/mask.key` (`~/.config/...`), created with a new
    /// random key (readable by its owner only) the first time a pair masks a column.
    pub fn local() -> Result<MaskKey> {
        if let Some(path) = std::env::var_os(MASK_KEY_FILE_ENV).filter(|p| !p.is_empty()) {
            return MaskKey::from_file(Path::new(&path));
        }
        let path = default_key_file().ok_or_else(|| ReconError::InvalidConfig {
            file: format!("environment variable {MASK_KEY_FILE_ENV}"),
            message: "is not set and there is no home folder for the default key file; \
                      set it to a file holding at least 16 bytes of secret"
                .into(),
        })?;
        if !path.exists() {
            create_key_file(&path)?;
        }
        MaskKey::from_file(&path)
    }
}

/// `$XDG_CONFIG_HOME/glue-recon/mask.key`, else `$HOME/.config/glue-recon/mask.key`.
fn default_key_file() -> Option<PathBuf> {
    let config = std::env::var_os("XDG_CONFIG_HOME")
        .filter(|p| !p.is_empty())
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME")
                .filter(|p| !p.is_empty())
                .map(|h| PathBuf::from(h).join(".config"))
        })?;
    Some(config.join("glue-recon").join("mask.key"))
}

/// Write a new random key (hex) to `path`, readable by its owner only; a file that
/// appeared meanwhile is kept.
fn create_key_file(path: &Path) -> Result<()> {
    use std::io::{Read, Write};
    let io = |source| ReconError::Io {
        path: path.to_path_buf(),
        source,
    };
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(io)?;
    }
    let mut random = [0u8; NEW_KEY_BYTES];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut random))
        .map_err(|source| ReconError::Io {
            path: "/dev/urandom".into(),
            source,
        })?;
    let hex: String = random.iter().map(|b| format!("{b:02x}")).collect();
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    match options.open(path) {
        Ok(mut file) => file.write_all(format!("{hex}\n").as_bytes()).map_err(io),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        Err(e) => Err(io(e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sha2::Digest;

    fn key(byte: u8) -> MaskKey {
        MaskKey::new(&[byte; 32], "test").unwrap()
    }

    #[test]
    fn tokens_are_stable_per_key_change_with_it_and_are_no_plain_sha256() {
        let value = b"\x01+44 20 7946 0958";
        let (a, b) = (key(1), key(2));
        assert_eq!(a.token(value), a.token(value));
        assert_ne!(a.token(value), a.token(b"\x01+44 20 7946 0959"));
        assert_ne!(a.token(value), b.token(value));
        let t = a.token(value);
        assert!(t.starts_with("hmac:") && t.len() == 17, "{t}");
        let plain: String = sha2::Sha256::digest(value)[..6]
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        assert_ne!(&t[5..], plain);
        assert!(!format!("{a:?}").contains('1'), "no key bytes in Debug");
    }

    #[test]
    fn a_short_key_or_a_missing_file_is_an_error_naming_it() {
        let err = MaskKey::new(b"short", "s.key").unwrap_err().to_string();
        assert!(
            err.contains("s.key") && err.contains("at least 16"),
            "{err}"
        );
        let err = MaskKey::from_file(Path::new("/nonexistent/mask.key"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("/nonexistent/mask.key"), "{err}");
    }

    #[test]
    fn a_new_key_file_is_created_once_and_private() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub/mask.key");
        create_key_file(&path).unwrap();
        let first = MaskKey::from_file(&path).unwrap();
        create_key_file(&path).unwrap();
        let again = MaskKey::from_file(&path).unwrap();
        assert_eq!(
            first.token(b"x"),
            again.token(b"x"),
            "an existing key is kept"
        );
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
    }
}
