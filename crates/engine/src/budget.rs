//! Memory budgets shared by the partitions in flight.
//!
//! Two things grow with a partition: the decoded batches kept so that the differing
//! columns of mismatched rows come from memory, and the key index the two sides are
//! joined in. Each has a budget; a partition whose share does not fit takes the slower
//! path with the same result (batches are read back from the files, the index waits
//! in a temporary file), so memory is bounded by the budgets, not by the table.

use std::sync::Arc;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// A number of bytes the partitions in flight may hold together, reserved in whole
/// MiB and returned when the reservation is dropped.
#[derive(Clone, Debug)]
pub struct MemoryBudget {
    /// One permit per MiB.
    mib: Arc<Semaphore>,
}

impl MemoryBudget {
    /// Decoded batches outside Lambda.
    pub(crate) const LOCAL_BATCH_BYTES: u64 = 512 << 20;

    /// Key indexes outside Lambda.
    pub const LOCAL_INDEX_BYTES: u64 = 1 << 30;

    /// A budget of `bytes` (rounded down to whole MiB); 0 grants nothing.
    pub fn new(bytes: u64) -> Self {
        let mib = ((bytes >> 20) as usize).min(Semaphore::MAX_PERMITS);
        MemoryBudget {
            mib: Arc::new(Semaphore::new(mib)),
        }
    }

    /// For decoded batches: in a Lambda function a quarter of its memory
    /// (`AWS_LAMBDA_FUNCTION_MEMORY_SIZE`, in MB), elsewhere
    /// `MemoryBudget::LOCAL_BATCH_BYTES`.
    pub fn for_batches() -> Self {
        Self::share_of_lambda(
            lambda_memory_setting().as_deref(),
            4,
            Self::LOCAL_BATCH_BYTES,
        )
    }

    /// For key indexes: in a Lambda function half of its memory, elsewhere
    /// [`MemoryBudget::LOCAL_INDEX_BYTES`].
    pub fn for_indexes() -> Self {
        Self::share_of_lambda(
            lambda_memory_setting().as_deref(),
            2,
            Self::LOCAL_INDEX_BYTES,
        )
    }

    /// `1/parts` of a Lambda memory setting (MB); `local` without one (or with one that
    /// is not a number).
    fn share_of_lambda(setting: Option<&str>, parts: u64, local: u64) -> Self {
        let mb = setting.and_then(|v| v.trim().parse::<u64>().ok());
        MemoryBudget::new(mb.map_or(local, |mb| (mb << 20) / parts))
    }

    /// Whole MiB not reserved now.
    #[cfg(test)]
    fn available_mib(&self) -> usize {
        self.mib.available_permits()
    }

    /// Reserve `bytes` until the permit is dropped, if that much is left.
    pub(crate) fn try_reserve(&self, bytes: u64) -> Option<OwnedSemaphorePermit> {
        let mib = u32::try_from(bytes.div_ceil(1 << 20)).ok()?;
        self.mib.clone().try_acquire_many_owned(mib).ok()
    }
}

fn lambda_memory_setting() -> Option<String> {
    std::env::var("AWS_LAMBDA_FUNCTION_MEMORY_SIZE").ok()
}

#[cfg(test)]
mod tests {
    use super::MemoryBudget;

    #[test]
    fn reservations_are_refused_beyond_the_budget_and_returned_on_drop() {
        let budget = MemoryBudget::new(3 << 20);
        let first = budget.try_reserve(2 << 20).expect("2 of 3 MiB");
        assert!(budget.try_reserve(2 << 20).is_none(), "only 1 MiB is left");
        let second = budget.try_reserve(1).expect("1 byte takes 1 MiB");
        assert_eq!(budget.available_mib(), 0);
        drop((first, second));
        assert_eq!(budget.available_mib(), 3);
        assert!(MemoryBudget::new(0).try_reserve(1).is_none());
    }

    #[test]
    fn a_lambda_gives_a_share_of_its_memory() {
        let share =
            |setting, parts| MemoryBudget::share_of_lambda(setting, parts, 7 << 20).available_mib();
        assert_eq!(share(Some("2048"), 4), 512);
        assert_eq!(share(Some(" 128 "), 4), 32);
        assert_eq!(share(Some("2048"), 2), 1024);
        assert_eq!(share(None, 4), 7);
        assert_eq!(share(Some("lots"), 2), 7);
    }
}
