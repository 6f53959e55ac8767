//! The engine's error type: one enum, every variant naming the thing it is about.

use std::path::PathBuf;

/// Everything that can stop glue-recon from reconciling, or from reconciling one
/// partition. Each variant carries the object it is about (file, table, column,
/// config key) so the message tells the user where to look and what to do.
#[derive(Debug, thiserror::Error)]
pub enum ReconError {
    /// The configuration file is malformed, has an unknown key or an ill-typed value.
    #[error("invalid config {file}: {message}")]
    InvalidConfig {
        /// The config file (or `<inline>`).
        file: String,
        /// What is wrong, with the line and key where known.
        message: String,
    },
    /// A request (CLI arguments, a Lambda event, a manifest item) does not make sense.
    #[error("invalid input: {0}")]
    InvalidInput(String),
    /// A table location does not exist or has no Parquet files.
    #[error("table not found: {location}: {reason}")]
    TableNotFound {
        /// The location as the user wrote it (path, s3:// or glue:// URI).
        location: String,
        /// Why it is considered missing.
        reason: String,
    },
    /// A Parquet file could not be decoded.
    #[error("corrupt or unreadable Parquet file {file}: {reason}")]
    CorruptParquet {
        /// The file path or URI.
        file: String,
        /// The decoder's message.
        reason: String,
    },
    /// The two sides cannot be compared (a key column is missing or has incompatible types).
    #[error("schema mismatch in {table}: {reason}")]
    SchemaMismatch {
        /// Which table or pair.
        table: String,
        /// What does not line up, naming the column.
        reason: String,
    },
    /// A column has a type the canonical encoding does not support.
    #[error(
        "column `{column}` has unsupported type {data_type}; exclude it with `exclude = [\"{column}\"]`"
    )]
    UnsupportedType {
        /// The column name.
        column: String,
        /// The Arrow type.
        data_type: String,
    },
    /// Storage refused access (S3 403, file permissions).
    #[error("access denied to {resource}: {reason}")]
    AccessDenied {
        /// The URI or path.
        resource: String,
        /// The service's message.
        reason: String,
    },
    /// A failure that may succeed when retried (throttling, 5xx, timeouts).
    #[error("transient failure on {resource}: {reason}")]
    Transient {
        /// The URI, table or service call.
        resource: String,
        /// The underlying message.
        reason: String,
    },
    /// A local I/O error on a named path.
    #[error("I/O error on {}: {source}", path.display())]
    Io {
        /// The path.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// The local temporary storage a large partition's key index spills to is full
    /// or unusable: not retried (a retry fills it again), the message names the
    /// settings that give it room.
    #[error(
        "local storage {} failed: {reason}; make room there: on a laptop set TMPDIR to a \
         folder with room, in AWS raise the stack parameter HashTmpStorage (recon-hash's \
         /tmp, at most 10240 MB) or HashMemory (the index then fits memory)",
        path.display()
    )]
    LocalStorage {
        /// The folder (or file) that failed.
        path: PathBuf,
        /// The OS error.
        reason: String,
    },
    /// The AWS SDK lacks what every call needs (a region, credentials): not retried.
    #[error("AWS is not set up: {0}")]
    AwsSetup(String),
    /// Writing an output (report, diff rows) failed.
    #[error("could not write {target}: {reason}")]
    Write {
        /// The output path or URI.
        target: String,
        /// Why.
        reason: String,
    },
}

impl ReconError {
    /// The stable name of the error, used as a Lambda `errorType` so the state
    /// machine can retry or catch it.
    pub fn error_type(&self) -> &'static str {
        match self {
            ReconError::InvalidConfig { .. } => "InvalidConfig",
            ReconError::InvalidInput(_) => "InvalidInput",
            ReconError::TableNotFound { .. } => "TableNotFound",
            ReconError::CorruptParquet { .. } => "CorruptParquet",
            ReconError::SchemaMismatch { .. } | ReconError::UnsupportedType { .. } => {
                "SchemaMismatch"
            }
            ReconError::AccessDenied { .. } => "AccessDenied",
            ReconError::AwsSetup(_) => "AwsSetup",
            ReconError::Transient { .. } => "Transient",
            ReconError::Io { .. } => "Io",
            ReconError::LocalStorage { .. } => "LocalStorage",
            ReconError::Write { .. } => "WriteFailed",
        }
    }

    /// Build an [`ReconError::Io`] for a path.
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        ReconError::Io {
            path: path.into(),
            source,
        }
    }
}

/// The engine's result type.
pub type Result<T, E = ReconError> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    /// One error of each variant (the match makes a new variant fail to compile here
    /// until it is added).
    fn one_of_each() -> Vec<ReconError> {
        let all = vec![
            ReconError::InvalidConfig {
                file: "f".into(),
                message: "m".into(),
            },
            ReconError::InvalidInput("i".into()),
            ReconError::TableNotFound {
                location: "l".into(),
                reason: "r".into(),
            },
            ReconError::CorruptParquet {
                file: "f".into(),
                reason: "r".into(),
            },
            ReconError::SchemaMismatch {
                table: "t".into(),
                reason: "r".into(),
            },
            ReconError::UnsupportedType {
                column: "c".into(),
                data_type: "d".into(),
            },
            ReconError::AccessDenied {
                resource: "r".into(),
                reason: "r".into(),
            },
            ReconError::Transient {
                resource: "r".into(),
                reason: "r".into(),
            },
            ReconError::io("/p", std::io::Error::other("e")),
            ReconError::LocalStorage {
                path: "/tmp".into(),
                reason: "r".into(),
            },
            ReconError::AwsSetup("a".into()),
            ReconError::Write {
                target: "t".into(),
                reason: "r".into(),
            },
        ];
        for e in &all {
            match e {
                ReconError::InvalidConfig { .. }
                | ReconError::InvalidInput(_)
                | ReconError::TableNotFound { .. }
                | ReconError::CorruptParquet { .. }
                | ReconError::SchemaMismatch { .. }
                | ReconError::UnsupportedType { .. }
                | ReconError::AccessDenied { .. }
                | ReconError::Transient { .. }
                | ReconError::Io { .. }
                | ReconError::LocalStorage { .. }
                | ReconError::AwsSetup(_)
                | ReconError::Write { .. } => {}
            }
        }
        all
    }

    #[test]
    fn every_error_type_is_in_the_contracts_list_and_only_transient_is_transient() {
        let contracts = include_str!("../../../docs/contracts.md");
        let list = contracts
            .split("Error types (`errorType` of a failed invocation):")
            .nth(1)
            .and_then(|rest| rest.split(".\n").next())
            .expect("docs/contracts.md lists the error types");
        for e in one_of_each() {
            let ty = e.error_type();
            assert!(
                list.contains(&format!("`{ty}`")),
                "`{ty}` of {e:?} is not documented"
            );
            let transient = matches!(e, ReconError::Transient { .. });
            assert_eq!(ty == "Transient", transient, "{e:?} is typed {ty}");
        }
    }
}
