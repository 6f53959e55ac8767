//! The error of the trigger and of event parsing. Its variants and messages are those
//! of the engine's error of the same names, so a Lambda reports the same error type
//! (`InvalidInput`, `Transient`, ...) whichever crate failed.

/// Why an event could not be parsed or a run could not be started.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EventError {
    /// The function's configuration (an environment variable) is missing or invalid.
    #[error("invalid config {file}: {message}")]
    InvalidConfig {
        /// Where the setting comes from (`environment variable STATE_MACHINE_ARN`).
        file: String,
        /// What is wrong.
        message: String,
    },
    /// The event or request does not make sense.
    #[error("invalid input: {0}")]
    InvalidInput(String),
    /// The service refused access.
    #[error("access denied to {resource}: {reason}")]
    AccessDenied {
        /// The resource (an ARN, a job name).
        resource: String,
        /// The service's message.
        reason: String,
    },
    /// A failure that may succeed when retried (throttling, 5xx, timeouts).
    #[error("transient failure on {resource}: {reason}")]
    Transient {
        /// The service call.
        resource: String,
        /// The underlying message.
        reason: String,
    },
}

impl EventError {
    /// The stable name of the variant: the Lambda error type the state machine and
    /// the EventBridge target's retry policy see.
    pub fn error_type(&self) -> &'static str {
        match self {
            EventError::InvalidConfig { .. } => "InvalidConfig",
            EventError::InvalidInput(_) => "InvalidInput",
            EventError::AccessDenied { .. } => "AccessDenied",
            EventError::Transient { .. } => "Transient",
        }
    }
}

/// A result of this crate.
pub type Result<T> = std::result::Result<T, EventError>;
