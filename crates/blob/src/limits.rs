//! Named limits of the blob store, units last. Every name, list and signature a client sends
//! has a bound; each constant says why that number. Most follow Azure Blob Storage, whose
//! clients Basin's endpoint serves, so that no client has to split or name things differently.

/// Blocks in one committed block list, as in Azure Blob Storage.
pub const BLOCKS_PER_BLOB_MAX: usize = 50_000;
/// Decoded length of a block id, as in Azure Blob Storage.
pub const BLOCK_ID_BYTES_MAX: usize = 64;
/// Largest `comp=blocklist` body: 50,000 entries of `<Uncommitted>` plus an 88-character
/// base64 id fit in 8 MiB with room for whitespace.
pub const BLOCK_LIST_BYTES_MAX: usize = 8 * 1024 * 1024;
/// How long after a block commit the folder backend copies the blocks into one file, unless a
/// reader needs the file sooner: long enough that the uploads and downloads that follow a
/// large upload do not compete with the copy for the disk (measured in docs/benchmarks.md).
pub const BLOB_COMPACTION_DELAY_SECONDS: u64 = 60;
/// Length of a blob name in bytes (Azure allows 1024 characters; bytes are stricter).
pub const BLOB_NAME_BYTES_MAX: usize = 1024;
/// Segments of a blob name (Azure's limit is 254).
pub const BLOB_NAME_SEGMENTS_MAX: usize = 254;
/// Length of one segment of a blob name: the file-name limit of common file systems.
pub const BLOB_SEGMENT_BYTES_MAX: usize = 255;
/// Longest signed-URL query Basin reads (`sv`, `se`, `sr`, `sp`, `sig` are well under 200).
pub const SAS_QUERY_BYTES_MAX: usize = 4096;
