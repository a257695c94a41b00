//! rust-example: an rpengine inventory plugin in Rust, with no crates.
//! It reports a generated fleet from its [plugin.config]:
//!   nodes = N              (0..=100000, default 0)
//!   resource_class = "..." (default "rust")
//!   traits = ["CUSTOM_..."]
//!   fleet = F              (0..=4294967295, default 0)
//! Node i has uuid <F as 8 hex digits>-0000-4000-8000-<i as 12 hex digits>
//! and name "rust-<i>". It calls no service and supports no optional operation.
//! README.md says what an author in Rust does: exports, memory, framing.

use std::alloc::{alloc, dealloc, Layout};

const VERSION: &str = "0.1.0";
const MAX_NODES: i64 = 100_000;

// ---- memory: the host writes requests into buffers we hand out -------

// A buffer is [len: u32][bytes...]; the host sees the address of bytes.
const HEADER: usize = 4;

#[no_mangle]
pub extern "C" fn rpengine_alloc(len: u32) -> *mut u8 {
    let size = HEADER + (len as usize).max(1);
    unsafe {
        let base = alloc(Layout::from_size_align(size, 4).unwrap());
        if base.is_null() {
            return base;
        }
        (base as *mut u32).write(size as u32);
        base.add(HEADER)
    }
}

#[no_mangle]
pub extern "C" fn rpengine_free(ptr: *mut u8) {
    if ptr.is_null() {
        return;
    }
    unsafe {
        let base = ptr.sub(HEADER);
        let size = (base as *const u32).read() as usize;
        dealloc(base, Layout::from_size_align(size, 4).unwrap());
    }
}

// ---- lifecycle -----------------------------------------------------------

extern "C" {
    // Runs the static constructors; crt1-reactor.o's _initialize does the
    // same. A cdylib gets no crt, so we export _initialize ourselves.
    fn __wasm_call_ctors();
}

#[no_mangle]
pub extern "C" fn _initialize() {
    unsafe { __wasm_call_ctors() }
}

#[no_mangle]
pub extern "C" fn rpengine_abi_version() -> i32 {
    1
}

// ---- answers: JSON kept alive until the next call ------------------------

static mut ANSWER: Vec<u8> = Vec::new();

/// answer keeps out and returns its address packed as ptr << 32 | len.
fn answer(out: String) -> u64 {
    unsafe {
        ANSWER = out.into_bytes();
        ((ANSWER.as_ptr() as u64) << 32) | ANSWER.len() as u64
    }
}

fn request<'a>(ptr: *const u8, len: u32) -> &'a [u8] {
    if len == 0 {
        return &[];
    }
    unsafe { std::slice::from_raw_parts(ptr, len as usize) }
}

// ---- operations ----------------------------------------------------------

struct Config {
    fleet: u32,
    nodes: i64,
    resource_class: String,
    traits: Vec<String>,
}

static mut CONFIG: Option<Config> = None;

#[no_mangle]
pub extern "C" fn rpengine_describe(_ptr: *const u8, _len: u32) -> u64 {
    answer(format!(
        "{{\"name\":\"rust-example\",\"version\":{},\"operations\":[],\"services\":[]}}",
        quote(VERSION)
    ))
}

#[no_mangle]
pub extern "C" fn rpengine_configure(ptr: *const u8, len: u32) -> u64 {
    match parse_config(request(ptr, len)) {
        Ok(c) => {
            unsafe { CONFIG = Some(c) };
            answer("{\"name\":\"rust-example\"}".to_string())
        }
        Err(e) => answer(format!("{{\"error\":{}}}", quote(&format!("rust-example config: {}", e)))),
    }
}

#[no_mangle]
pub extern "C" fn rpengine_list_nodes(_ptr: *const u8, _len: u32) -> u64 {
    // The request carries the engine's scope; this fleet has none, and
    // the engine filters again anyway.
    let c = match unsafe { CONFIG.as_ref() } {
        Some(c) => c,
        None => return answer("{\"error\":\"not configured\"}".to_string()),
    };
    let traits: Vec<String> = c.traits.iter().map(|t| quote(t)).collect();
    let mut out = String::with_capacity(64 + 160 * c.nodes as usize);
    out.push_str("{\"nodes\":[");
    for i in 0..c.nodes {
        if i > 0 {
            out.push(',');
        }
        out.push_str(&format!(
            "{{\"uuid\":\"{:08x}-0000-4000-8000-{:012x}\",\"name\":\"rust-{}\",\"resource_class\":{},\
             \"power_state\":\"power off\",\"provision_state\":\"available\",\"traits\":[{}]}}",
            c.fleet,
            i,
            i,
            quote(&c.resource_class),
            traits.join(",")
        ));
    }
    out.push_str("],\"complete\":true}");
    answer(out)
}

#[no_mangle]
pub extern "C" fn rpengine_list_instances(_ptr: *const u8, _len: u32) -> u64 {
    answer("{\"instances\":[]}".to_string())
}

// ---- configuration: a strict reader of one JSON object -------------------

fn parse_config(raw: &[u8]) -> Result<Config, String> {
    let mut c = Config { fleet: 0, nodes: 0, resource_class: "rust".to_string(), traits: Vec::new() };
    let text = std::str::from_utf8(raw).map_err(|_| "not UTF-8".to_string())?;
    let mut p = Parser { s: text.as_bytes(), i: 0 };
    let v = p.value()?;
    p.ws();
    if p.i != p.s.len() {
        return Err(format!("trailing data at byte {}", p.i));
    }
    let fields = match v {
        Json::Object(f) => f,
        _ => return Err("want a table (a JSON object)".to_string()),
    };
    for (k, v) in fields {
        match (k.as_str(), v) {
            ("nodes", Json::Number(n)) if n >= 0.0 && n <= MAX_NODES as f64 && n.fract() == 0.0 => c.nodes = n as i64,
            ("fleet", Json::Number(n)) if n >= 0.0 && n <= u32::MAX as f64 && n.fract() == 0.0 => c.fleet = n as u32,
            ("fleet", _) => return Err("fleet: want a whole number from 0 to 4294967295".to_string()),
            ("nodes", _) => return Err(format!("nodes: want a whole number from 0 to {}", MAX_NODES)),
            ("resource_class", Json::String(s)) if !s.is_empty() => c.resource_class = s,
            ("resource_class", _) => return Err("resource_class: want a non-empty string".to_string()),
            ("traits", Json::Array(a)) => {
                for t in a {
                    match t {
                        Json::String(s) => c.traits.push(s),
                        _ => return Err("traits: want strings".to_string()),
                    }
                }
            }
            ("traits", _) => return Err("traits: want a list of strings".to_string()),
            (other, _) => return Err(format!("unknown key {}", quote(other))),
        }
    }
    Ok(c)
}

enum Json {
    Null,
    Bool(bool),
    Number(f64),
    String(String),
    Array(Vec<Json>),
    Object(Vec<(String, Json)>),
}

struct Parser<'a> {
    s: &'a [u8],
    i: usize,
}

impl<'a> Parser<'a> {
    fn ws(&mut self) {
        while self.i < self.s.len() && matches!(self.s[self.i], b' ' | b'\t' | b'\n' | b'\r') {
            self.i += 1;
        }
    }

    fn err<T>(&self, what: &str) -> Result<T, String> {
        Err(format!("malformed JSON at byte {}: {}", self.i, what))
    }

    fn value(&mut self) -> Result<Json, String> {
        self.ws();
        match self.s.get(self.i) {
            Some(b'{') => self.object(),
            Some(b'[') => self.array(),
            Some(b'"') => Ok(Json::String(self.string()?)),
            Some(b't') => self.word("true", Json::Bool(true)),
            Some(b'f') => self.word("false", Json::Bool(false)),
            Some(b'n') => self.word("null", Json::Null),
            Some(_) => self.number(),
            None => self.err("unexpected end"),
        }
    }

    fn word(&mut self, w: &str, v: Json) -> Result<Json, String> {
        if self.s[self.i..].starts_with(w.as_bytes()) {
            self.i += w.len();
            Ok(v)
        } else {
            self.err("unknown word")
        }
    }

    fn number(&mut self) -> Result<Json, String> {
        let start = self.i;
        while self.i < self.s.len() && matches!(self.s[self.i], b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9') {
            self.i += 1;
        }
        let t = std::str::from_utf8(&self.s[start..self.i]).unwrap_or("");
        match t.parse::<f64>() {
            Ok(n) if !t.is_empty() => Ok(Json::Number(n)),
            _ => self.err("bad number"),
        }
    }

    fn string(&mut self) -> Result<String, String> {
        self.i += 1; // the opening quote
        let mut out = String::new();
        loop {
            let rest = std::str::from_utf8(&self.s[self.i..]).map_err(|_| "not UTF-8".to_string())?;
            let mut chars = rest.char_indices();
            match chars.next() {
                None => return self.err("unterminated string"),
                Some((_, '"')) => {
                    self.i += 1;
                    return Ok(out);
                }
                Some((_, '\\')) => {
                    let e = self.s.get(self.i + 1).copied();
                    self.i += 2;
                    match e {
                        Some(b'"') => out.push('"'),
                        Some(b'\\') => out.push('\\'),
                        Some(b'/') => out.push('/'),
                        Some(b'b') => out.push('\u{8}'),
                        Some(b'f') => out.push('\u{c}'),
                        Some(b'n') => out.push('\n'),
                        Some(b'r') => out.push('\r'),
                        Some(b't') => out.push('\t'),
                        Some(b'u') => {
                            let hex = self.s.get(self.i..self.i + 4).and_then(|h| std::str::from_utf8(h).ok());
                            let code = hex.and_then(|h| u32::from_str_radix(h, 16).ok());
                            self.i += 4;
                            out.push(code.and_then(char::from_u32).unwrap_or('\u{fffd}'));
                        }
                        _ => return self.err("bad escape"),
                    }
                }
                Some((_, c)) => {
                    out.push(c);
                    self.i += c.len_utf8();
                }
            }
        }
    }

    fn array(&mut self) -> Result<Json, String> {
        self.i += 1;
        let mut out = Vec::new();
        self.ws();
        if self.s.get(self.i) == Some(&b']') {
            self.i += 1;
            return Ok(Json::Array(out));
        }
        loop {
            out.push(self.value()?);
            self.ws();
            match self.s.get(self.i) {
                Some(b',') => self.i += 1,
                Some(b']') => {
                    self.i += 1;
                    return Ok(Json::Array(out));
                }
                _ => return self.err("want , or ]"),
            }
        }
    }

    fn object(&mut self) -> Result<Json, String> {
        self.i += 1;
        let mut out = Vec::new();
        self.ws();
        if self.s.get(self.i) == Some(&b'}') {
            self.i += 1;
            return Ok(Json::Object(out));
        }
        loop {
            self.ws();
            if self.s.get(self.i) != Some(&b'"') {
                return self.err("want a key");
            }
            let k = self.string()?;
            self.ws();
            if self.s.get(self.i) != Some(&b':') {
                return self.err("want :");
            }
            self.i += 1;
            out.push((k, self.value()?));
            self.ws();
            match self.s.get(self.i) {
                Some(b',') => self.i += 1,
                Some(b'}') => {
                    self.i += 1;
                    return Ok(Json::Object(out));
                }
                _ => return self.err("want , or }"),
            }
        }
    }
}

/// quote writes s as a JSON string.
fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}
