//! Staged blocks: block ids and the `comp=blocklist` XML body.
//!
//! Azure clients send files over their single-put threshold (64 MiB for most SDKs) as
//! `PUT ?comp=block&blockid=<base64>` parts and then commit them with
//! `<BlockList><Latest>id</Latest>...</BlockList>`. Basin keeps no committed block structure,
//! so `<Latest>`, `<Uncommitted>` and `<Committed>` all name blocks staged since the last
//! commit. The parser is bounded: body size, entry count and id length all have limits, and
//! a list names each block at most once, so a commit never writes more than was staged.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use quick_xml::Reader;
use quick_xml::events::Event;

use crate::limits::{BLOCK_ID_BYTES_MAX, BLOCK_LIST_BYTES_MAX, BLOCKS_PER_BLOB_MAX};

/// A block id exactly as the client sent it: base64 of at most 64 bytes.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct BlockId(String);

/// Why a block id or block list was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BlockListError {
    /// The block id is not base64 of 1 to 64 bytes.
    #[error("a block id must be base64 of 1 to {BLOCK_ID_BYTES_MAX} bytes")]
    InvalidBlockId,
    /// The XML is malformed or not a `BlockList`.
    #[error("the block list is not a valid <BlockList> document")]
    Malformed,
    /// More entries than a blob may have.
    #[error("a block list may name at most {BLOCKS_PER_BLOB_MAX} blocks")]
    TooManyBlocks,
    /// The list names a block twice.
    #[error("a block list may name each staged block once")]
    RepeatedBlock,
    /// The body is larger than any valid list.
    #[error("the block list body exceeds {BLOCK_LIST_BYTES_MAX} bytes")]
    TooLarge,
}

impl BlockId {
    /// Checks a block id as sent (query values are already percent-decoded).
    pub fn parse(raw: &str) -> Result<Self, BlockListError> {
        let raw = raw.trim();
        let decoded = STANDARD
            .decode(raw)
            .map_err(|_| BlockListError::InvalidBlockId)?;
        if decoded.is_empty() || decoded.len() > BLOCK_ID_BYTES_MAX {
            return Err(BlockListError::InvalidBlockId);
        }
        Ok(Self(raw.to_owned()))
    }

    /// The id as sent.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// Parses a `comp=blocklist` body into the ordered block ids to commit.
pub fn parse_block_list(body: &[u8]) -> Result<Vec<BlockId>, BlockListError> {
    if body.len() > BLOCK_LIST_BYTES_MAX {
        return Err(BlockListError::TooLarge);
    }
    let text = std::str::from_utf8(body).map_err(|_| BlockListError::Malformed)?;
    let text = text.trim_start_matches('\u{feff}');
    let mut reader = Reader::from_str(text);
    let mut blocks = Vec::new();
    let mut seen = std::collections::HashSet::new();
    let mut depth = 0usize;
    let mut seen_root = false;
    let mut current: Option<String> = None;
    loop {
        let event = reader.read_event().map_err(|_| BlockListError::Malformed)?;
        match event {
            Event::Start(start) => {
                let name = start.local_name();
                match (depth, name.as_ref()) {
                    (0, b"BlockList") if !seen_root => seen_root = true,
                    (1, b"Latest" | b"Committed" | b"Uncommitted") => current = Some(String::new()),
                    _ => return Err(BlockListError::Malformed),
                }
                depth = depth.saturating_add(1);
            }
            Event::Empty(start)
                if depth == 0 && !seen_root && start.local_name().as_ref() == b"BlockList" =>
            {
                seen_root = true;
            }
            Event::End(_) => {
                if depth == 2 {
                    let id = current.take().ok_or(BlockListError::Malformed)?;
                    if blocks.len() >= BLOCKS_PER_BLOB_MAX {
                        return Err(BlockListError::TooManyBlocks);
                    }
                    let block = BlockId::parse(&id)?;
                    // Naming one small block 50,000 times would turn 100 KB of upload into
                    // gigabytes of writes; every SDK names each block once.
                    if !seen.insert(block.clone()) {
                        return Err(BlockListError::RepeatedBlock);
                    }
                    blocks.push(block);
                }
                depth = depth.checked_sub(1).ok_or(BlockListError::Malformed)?;
            }
            Event::Text(text) => {
                let text = text.decode().map_err(|_| BlockListError::Malformed)?;
                push_text(&mut current, depth, &text)?;
            }
            Event::GeneralRef(reference) => {
                let name = reference.decode().map_err(|_| BlockListError::Malformed)?;
                let resolved = resolve_reference(&name).ok_or(BlockListError::Malformed)?;
                push_text(&mut current, depth, resolved.encode_utf8(&mut [0; 4]))?;
            }
            Event::Decl(_) | Event::Comment(_) => {}
            Event::Eof if seen_root && depth == 0 => return Ok(blocks),
            _ => return Err(BlockListError::Malformed),
        }
    }
}

/// Text inside an entry is part of its id; elsewhere only whitespace is allowed.
fn push_text(current: &mut Option<String>, depth: usize, text: &str) -> Result<(), BlockListError> {
    match current {
        Some(id) if depth == 2 => {
            if id.len().saturating_add(text.len()) > BLOCK_ID_BYTES_MAX * 2 {
                return Err(BlockListError::InvalidBlockId);
            }
            id.push_str(text);
            Ok(())
        }
        _ if text.trim().is_empty() => Ok(()),
        _ => Err(BlockListError::Malformed),
    }
}

/// The five predefined entities and numeric character references.
fn resolve_reference(name: &str) -> Option<char> {
    match name {
        "amp" => Some('&'),
        "lt" => Some('<'),
        "gt" => Some('>'),
        "quot" => Some('"'),
        "apos" => Some('\''),
        _ => {
            let number = name.strip_prefix('#')?;
            let code = match number.strip_prefix('x') {
                Some(hex) => u32::from_str_radix(hex, 16).ok()?,
                None => number.parse().ok()?,
            };
            char::from_u32(code)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(n: u32) -> String {
        STANDARD.encode(format!("block-{n:06}"))
    }

    #[test]
    fn a_block_list_as_azure_sdks_send_it_parses_in_order() {
        let body = format!(
            "<?xml version='1.0' encoding='utf-8'?>\n<BlockList><Latest>{}</Latest><Committed>{}</Committed>\n  <Uncommitted>{}</Uncommitted></BlockList>",
            id(1),
            id(2),
            id(3)
        );
        let blocks = parse_block_list(body.as_bytes()).unwrap();
        let ids: Vec<&str> = blocks.iter().map(BlockId::as_str).collect();
        assert_eq!(ids, [id(1), id(2), id(3)]);
    }

    #[test]
    fn character_references_in_ids_are_resolved() {
        let body = "<BlockList><Latest>YWJj&#x3D;</Latest></BlockList>";
        assert!(
            parse_block_list(body.as_bytes()).is_err(),
            "YWJj= is not base64"
        );
        let body = "<BlockList><Latest>YW&#74;j</Latest></BlockList>";
        let blocks = parse_block_list(body.as_bytes()).unwrap();
        assert_eq!(blocks[0].as_str(), "YWJj");
    }

    #[test]
    fn an_empty_block_list_commits_an_empty_blob() {
        assert!(parse_block_list(b"<BlockList/>").unwrap().is_empty());
        assert!(
            parse_block_list(b"<BlockList></BlockList>")
                .unwrap()
                .is_empty()
        );
    }

    #[test]
    fn malformed_documents_are_refused() {
        for bad in [
            "",
            "<BlockList>",
            "<Other><Latest>YWJj</Latest></Other>",
            "<BlockList><Latest>YWJj</Latest></BlockList><BlockList/>",
            "<BlockList><Latest><Latest>YWJj</Latest></Latest></BlockList>",
            "<BlockList>text<Latest>YWJj</Latest></BlockList>",
            "<BlockList><Latest>not base64!</Latest></BlockList>",
            "<BlockList><Latest></Latest></BlockList>",
            "<BlockList><Latest>&unknown;</Latest></BlockList>",
        ] {
            assert!(parse_block_list(bad.as_bytes()).is_err(), "{bad}");
        }
    }

    #[test]
    fn block_ids_over_64_bytes_and_lists_over_50000_entries_are_refused() {
        let long = STANDARD.encode([7u8; BLOCK_ID_BYTES_MAX + 1]);
        assert_eq!(BlockId::parse(&long), Err(BlockListError::InvalidBlockId));
        assert!(BlockId::parse(&STANDARD.encode([7u8; BLOCK_ID_BYTES_MAX])).is_ok());
        let entries = |count: usize| -> String {
            (0..count)
                .map(|n| format!("<Latest>{}</Latest>", STANDARD.encode(format!("{n:08}"))))
                .collect()
        };
        let at_limit = format!("<BlockList>{}</BlockList>", entries(BLOCKS_PER_BLOB_MAX));
        assert_eq!(
            parse_block_list(at_limit.as_bytes()).unwrap().len(),
            BLOCKS_PER_BLOB_MAX
        );
        let over = format!(
            "<BlockList>{}</BlockList>",
            entries(BLOCKS_PER_BLOB_MAX + 1)
        );
        assert_eq!(
            parse_block_list(over.as_bytes()),
            Err(BlockListError::TooManyBlocks)
        );
        let twice = format!(
            "<BlockList><Latest>{0}</Latest><Uncommitted>{0}</Uncommitted></BlockList>",
            id(1)
        );
        assert_eq!(
            parse_block_list(twice.as_bytes()),
            Err(BlockListError::RepeatedBlock)
        );
        let huge = vec![b' '; BLOCK_LIST_BYTES_MAX + 1];
        assert_eq!(parse_block_list(&huge), Err(BlockListError::TooLarge));
    }
}
