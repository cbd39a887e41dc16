//! The console's files as browsers get them. Every file but the page itself is served under a
//! name carrying a hash of its content (`app.3f9c2b1e04aa.js`), so browsers may keep it for a
//! year and a new release can never mix old and new modules. References between files are
//! rewritten to those names: `'./api.js'` in a module or style sheet, `console/app.js` in the
//! page. A file's hash covers its rewritten text, so a change anywhere renames every file that
//! imports it, directly or not; that is why imports must not form a cycle (refused here, and by
//! a unit test over the embedded files, so a cycle never reaches a release).
//!
//! The page (`index.html`) is served at `/` with `no-cache` and gets the deployment's settings
//! as `<meta>` elements in place of its `<!-- basin:settings -->` marker: the console reads
//! them without any inline script.

use std::collections::{BTreeMap, HashMap};

use bytes::Bytes;
use md5::{Digest, Md5};

/// The page's file name; served at `/`, never under a hashed name.
pub(crate) const PAGE: &str = "index.html";

/// Where the page's settings go.
const SETTINGS_MARKER: &str = "<!-- basin:settings -->";

/// One file ready to serve.
#[derive(Debug, Clone)]
pub(crate) struct Asset {
    pub(crate) bytes: Bytes,
    pub(crate) content_type: &'static str,
    /// Strong validator: the MD5 of `bytes`, quoted.
    pub(crate) etag: String,
}

/// The whole console: the page and the hashed files.
#[derive(Debug, Clone)]
pub(crate) struct AssetSet {
    page: Asset,
    by_served_name: HashMap<String, Asset>,
}

/// Why a set of files cannot be served.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub(crate) enum AssetError {
    #[error("the console has no {PAGE}")]
    NoPage,
    #[error("{0}: only letters, digits, '.', '-' and '_' may name a console file")]
    BadName(String),
    #[error("{0} is not UTF-8 text")]
    NotText(String),
    #[error("console files import each other in a cycle through {0}")]
    Cycle(String),
}

impl AssetSet {
    /// Hashes and rewrites `files` (name, content) and fills the page's settings (`<meta
    /// name="basin-<name>" content="<value>">`, values escaped).
    pub(crate) fn build<'a>(
        files: impl IntoIterator<Item = (&'a str, &'a [u8])>,
        settings: &BTreeMap<&str, String>,
    ) -> Result<Self, AssetError> {
        let mut sources = BTreeMap::new();
        for (name, bytes) in files {
            if name.is_empty()
                || name.starts_with('.')
                || !name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_'))
            {
                return Err(AssetError::BadName(name.to_owned()));
            }
            sources.insert(name, bytes);
        }
        let page_source = sources.remove(PAGE).ok_or(AssetError::NoPage)?;
        let mut builder = Builder {
            sources: &sources,
            served_names: HashMap::new(),
            assets: HashMap::new(),
            visiting: Vec::new(),
        };
        for name in sources.keys() {
            builder.resolve(name)?;
        }
        let page_text = text(PAGE, page_source)?;
        let page_text = builder.rewrite(page_text)?;
        let page_text = page_text.replacen(SETTINGS_MARKER, &settings_meta(settings), 1);
        Ok(Self {
            page: asset(PAGE, page_text.into_bytes()),
            by_served_name: builder.assets,
        })
    }

    /// The page.
    pub(crate) fn page(&self) -> &Asset {
        &self.page
    }

    /// A file by its hashed name.
    pub(crate) fn get(&self, served_name: &str) -> Option<&Asset> {
        self.by_served_name.get(served_name)
    }

    /// Every hashed name (for tests and the start-up log).
    #[cfg(test)]
    pub(crate) fn served_names(&self) -> impl Iterator<Item = &str> {
        self.by_served_name.keys().map(String::as_str)
    }
}

struct Builder<'s> {
    sources: &'s BTreeMap<&'s str, &'s [u8]>,
    /// Source name to served (hashed) name, for files done.
    served_names: HashMap<&'s str, String>,
    assets: HashMap<String, Asset>,
    /// The import chain being resolved, to find cycles.
    visiting: Vec<&'s str>,
}

impl<'s> Builder<'s> {
    /// Makes `name` servable after everything it references.
    fn resolve(&mut self, name: &'s str) -> Result<(), AssetError> {
        if self.served_names.contains_key(name) {
            return Ok(());
        }
        if self.visiting.contains(&name) {
            return Err(AssetError::Cycle(name.to_owned()));
        }
        let Some(&source) = self.sources.get(name) else {
            return Ok(());
        };
        let content = if is_text(name) {
            self.visiting.push(name);
            let source_text = text(name, source)?;
            let rewritten = self.rewrite(source_text);
            self.visiting.pop();
            rewritten?.into_bytes()
        } else {
            source.to_vec()
        };
        let served = hashed_name(name, &content);
        self.assets.insert(served.clone(), asset(name, content));
        self.served_names.insert(name, served);
        Ok(())
    }

    /// `text` with every reference to another file replaced by its served name.
    fn rewrite(&mut self, text: &str) -> Result<String, AssetError> {
        let mut rewritten = String::with_capacity(text.len() + 64);
        let mut copied_up_to = 0;
        for (start, end) in references(text) {
            let Some((&target, _)) = self.sources.get_key_value(&text[start..end]) else {
                continue;
            };
            self.resolve(target)?;
            let Some(served) = self.served_names.get(target) else {
                continue;
            };
            rewritten.push_str(&text[copied_up_to..start]);
            rewritten.push_str(served);
            copied_up_to = end;
        }
        rewritten.push_str(&text[copied_up_to..]);
        Ok(rewritten)
    }
}

/// Byte ranges of file names referenced as `./<name>` or `console/<name>` inside quotes,
/// backticks or `url(...)`.
fn references(text: &str) -> Vec<(usize, usize)> {
    let bytes = text.as_bytes();
    let mut found = Vec::new();
    for prefix in ["./", "console/"] {
        for (at, _) in text.match_indices(prefix) {
            let opens = at
                .checked_sub(1)
                .and_then(|before| bytes.get(before))
                .is_some_and(|c| matches!(c, b'\'' | b'"' | b'`' | b'('));
            if !opens {
                continue;
            }
            let start = at + prefix.len();
            let length = bytes[start..]
                .iter()
                .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, b'.' | b'-' | b'_'))
                .count();
            let end = start + length;
            let closes = bytes
                .get(end)
                .is_some_and(|c| matches!(c, b'\'' | b'"' | b'`' | b')'));
            if length > 0 && closes {
                found.push((start, end));
            }
        }
    }
    found.sort_unstable();
    found
}

fn text<'a>(name: &str, bytes: &'a [u8]) -> Result<&'a str, AssetError> {
    std::str::from_utf8(bytes).map_err(|_| AssetError::NotText(name.to_owned()))
}

fn is_text(name: &str) -> bool {
    matches!(
        extension(name),
        "js" | "mjs" | "css" | "html" | "svg" | "json" | "webmanifest" | "txt"
    )
}

fn extension(name: &str) -> &str {
    name.rsplit_once('.').map_or("", |(_, extension)| extension)
}

/// `app.js` with content hash `3f9c...` is `app.3f9c2b1e04aa.js`.
fn hashed_name(name: &str, content: &[u8]) -> String {
    let digest = Md5::digest(content);
    let hash: String = digest[..6]
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect();
    match name.rsplit_once('.') {
        Some((stem, extension)) => format!("{stem}.{hash}.{extension}"),
        None => format!("{name}.{hash}"),
    }
}

fn asset(name: &str, content: Vec<u8>) -> Asset {
    let digest = Md5::digest(&content);
    let etag = format!(
        "\"{}\"",
        digest
            .iter()
            .map(|byte| format!("{byte:02x}"))
            .collect::<String>()
    );
    Asset {
        bytes: Bytes::from(content),
        content_type: content_type(name),
        etag,
    }
}

fn content_type(name: &str) -> &'static str {
    match extension(name) {
        "html" => "text/html; charset=utf-8",
        "js" | "mjs" => "text/javascript; charset=utf-8",
        "css" => "text/css; charset=utf-8",
        "svg" => "image/svg+xml",
        "json" => "application/json",
        "webmanifest" => "application/manifest+json",
        "txt" => "text/plain; charset=utf-8",
        "png" => "image/png",
        "ico" => "image/x-icon",
        "woff2" => "font/woff2",
        _ => "application/octet-stream",
    }
}

fn settings_meta(settings: &BTreeMap<&str, String>) -> String {
    settings
        .iter()
        .map(|(name, value)| {
            format!(
                "<meta name=\"basin-{}\" content=\"{}\">",
                escape_attribute(name),
                escape_attribute(value)
            )
        })
        .collect::<Vec<_>>()
        .join("\n    ")
}

fn escape_attribute(value: &str) -> String {
    let mut escaped = String::with_capacity(value.len());
    for c in value.chars() {
        match c {
            '&' => escaped.push_str("&amp;"),
            '"' => escaped.push_str("&quot;"),
            '<' => escaped.push_str("&lt;"),
            '>' => escaped.push_str("&gt;"),
            '\'' => escaped.push_str("&#39;"),
            c => escaped.push(c),
        }
    }
    escaped
}

#[cfg(test)]
mod tests {
    use super::*;

    fn build(files: &[(&str, &str)]) -> Result<AssetSet, AssetError> {
        AssetSet::build(
            files.iter().map(|(name, text)| (*name, text.as_bytes())),
            &BTreeMap::new(),
        )
    }

    /// The served name of `file` (`app.js` -> `app.<hash>.js`), or empty.
    fn served(set: &AssetSet, file: &str) -> String {
        let (stem, extension) = file.rsplit_once('.').unwrap_or((file, ""));
        set.served_names()
            .find(|name| {
                name.strip_prefix(stem)
                    .and_then(|rest| rest.strip_suffix(extension))
                    .is_some_and(|hash| {
                        hash.len() == 14 && hash.starts_with('.') && hash.ends_with('.')
                    })
            })
            .map(str::to_owned)
            .unwrap_or_default()
    }

    #[test]
    fn imports_are_rewritten_to_hashed_names_and_hashes_follow_imports() {
        let files = [
            (
                "index.html",
                r#"<script type="module" src="console/app.js"></script>"#,
            ),
            (
                "app.js",
                "import { a } from './api.js';\nconst css = `./app.css`;",
            ),
            ("api.js", "export const a = 1;"),
            ("app.css", "body { background: url(./logo.svg) }"),
            ("logo.svg", "<svg/>"),
        ];
        let set = build(&files).unwrap();
        let app = served(&set, "app.js");
        let api = served(&set, "api.js");
        assert!(app.len() == "app..js".len() + 12, "{app}");
        let page = std::str::from_utf8(&set.page().bytes).unwrap();
        assert!(page.contains(&format!("src=\"console/{app}\"")), "{page}");
        let app_text = std::str::from_utf8(&set.get(&app).unwrap().bytes)
            .unwrap()
            .to_owned();
        assert!(app_text.contains(&format!("from './{api}'")), "{app_text}");
        let css = served(&set, "app.css");
        assert!(css.len() == "app..css".len() + 12, "{css}");

        // A change to api.js renames api.js and app.js, which imports it, but not logo.svg.
        let mut changed = files;
        changed[2] = ("api.js", "export const a = 2;");
        let again = build(&changed).unwrap();
        assert_ne!(served(&again, "api.js"), api);
        assert_ne!(served(&again, "app.js"), app);
        assert_eq!(served(&again, "logo.svg"), served(&set, "logo.svg"));
    }

    #[test]
    fn only_references_in_quotes_to_known_files_are_rewritten() {
        let files = [
            ("index.html", "x"),
            (
                "app.js",
                "import './api.js'; // ./api.js\nfetch('./other.js'); '../api.js'; './api.jsx'",
            ),
            ("api.js", ""),
        ];
        let set = build(&files).unwrap();
        let app = std::str::from_utf8(&set.get(&served(&set, "app.js")).unwrap().bytes)
            .unwrap()
            .to_owned();
        let api = served(&set, "api.js");
        assert_eq!(
            app,
            format!("import './{api}'; // ./api.js\nfetch('./other.js'); '../api.js'; './api.jsx'")
        );
    }

    #[test]
    fn import_cycles_missing_pages_and_odd_names_are_refused() {
        let cycle = [
            ("index.html", ""),
            ("a.js", "import './b.js';"),
            ("b.js", "import './c.js';"),
            ("c.js", "import './a.js';"),
        ];
        assert!(matches!(build(&cycle), Err(AssetError::Cycle(_))));
        assert_eq!(build(&[("a.js", "")]).unwrap_err(), AssetError::NoPage);
        assert!(matches!(
            build(&[("index.html", ""), ("a b.js", "")]),
            Err(AssetError::BadName(_))
        ));
    }

    #[test]
    fn settings_become_escaped_meta_elements() {
        let mut settings = BTreeMap::new();
        settings.insert(
            "basemap",
            "https://t.example/{z}/{x}/{y}.png?a=1&b=\"2\"".to_owned(),
        );
        let set = AssetSet::build(
            [(
                "index.html",
                b"<head><!-- basin:settings --></head>".as_slice(),
            )],
            &settings,
        )
        .unwrap();
        assert_eq!(
            std::str::from_utf8(&set.page().bytes).unwrap(),
            "<head><meta name=\"basin-basemap\" content=\"https://t.example/{z}/{x}/{y}.png?a=1&amp;b=&quot;2&quot;\"></head>"
        );
    }

    #[test]
    fn the_embedded_console_builds() {
        let set = AssetSet::build(
            super::super::CONSOLE_FILES
                .iter()
                .map(|(name, bytes)| (*name, *bytes)),
            &BTreeMap::new(),
        )
        .unwrap();
        assert!(!served(&set, "app.js").is_empty());
        assert!(!served(&set, "app.css").is_empty());
    }
}
