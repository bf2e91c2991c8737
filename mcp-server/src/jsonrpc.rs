//! JSON-RPC error replies that rmcp does not give (issue 16): `-32700` for input that is not
//! JSON, the request's `id` on every error reply when one could be read, and `-32602` (invalid
//! params) for a known method whose params do not fit (rmcp answered `-32601`, method not found,
//! or nothing). [`check`] classifies one incoming message; the stdio transport
//! ([`StdioTransport`]) and the HTTP middleware ([`crate::http`]) answer its error replies
//! themselves and hand every other message to rmcp.

use rmcp::model::{ClientJsonRpcMessage, ClientRequest, JsonRpcMessage, ServerJsonRpcMessage};
use rmcp::service::RoleServer;
use serde_json::{json, Value};
use std::sync::Arc;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};

/// JSON-RPC: the input is not JSON.
pub const PARSE_ERROR: i64 = -32700;
/// JSON-RPC: the input is JSON but not a request object.
pub const INVALID_REQUEST: i64 = -32600;
/// JSON-RPC: no such method.
pub const METHOD_NOT_FOUND: i64 = -32601;
/// JSON-RPC: the method exists, its params do not fit.
pub const INVALID_PARAMS: i64 = -32602;

/// Largest message accepted on stdio (bytes): a 1 MiB argument, JSON-escaped, with room to spare.
pub const MAX_LINE_BYTES: usize = 16 * 1024 * 1024;

/// Requests a client sends to a server that rmcp parses into typed params: when one arrives as a
/// custom request, its params did not fit.
const CLIENT_METHODS: [&str; 21] = [
    "initialize",
    "ping",
    "server/discover",
    "completion/complete",
    "logging/setLevel",
    "prompts/get",
    "prompts/list",
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "resources/directory/read",
    "resources/subscribe",
    "resources/unsubscribe",
    "subscriptions/listen",
    "tools/call",
    "tools/list",
    "tasks/get",
    "tasks/update",
    "tasks/cancel",
    "skills/list",
    "skills/get",
];

/// What to do with one incoming message.
#[derive(Debug)]
pub enum Checked {
    /// A message for rmcp.
    Message(Box<ClientJsonRpcMessage>),
    /// An error reply to send back (a JSON-RPC error object, `id` included, null when unreadable).
    Reply(Value),
    /// Nothing to do (a malformed notification or response: JSON-RPC never answers those).
    Ignore,
}

/// A JSON-RPC error response.
pub fn error_reply(id: Option<&Value>, code: i64, message: impl Into<String>) -> Value {
    json!({"jsonrpc": "2.0", "id": id.cloned().unwrap_or(Value::Null), "error": {"code": code, "message": message.into()}})
}

/// Why `params` do not fit `method`, as serde says it (for the methods whose params are rich).
fn params_problem(method: &str, params: Option<&Value>) -> String {
    use rmcp::model::{CallToolRequestParams, CompleteRequestParams, GetPromptRequestParams, InitializeRequestParams, ReadResourceRequestParams};
    fn why<T: serde::de::DeserializeOwned>(params: Option<&Value>) -> Option<String> {
        let v = params.cloned().unwrap_or(Value::Null);
        serde_path_to_error::deserialize::<_, T>(v).err().map(|e| {
            let path = e.path().to_string();
            if path.is_empty() || path == "." {
                e.into_inner().to_string()
            } else {
                format!("`{path}`: {}", e.into_inner())
            }
        })
    }
    let detail = match method {
        "tools/call" => why::<CallToolRequestParams>(params),
        "resources/read" => why::<ReadResourceRequestParams>(params),
        "prompts/get" => why::<GetPromptRequestParams>(params),
        "completion/complete" => why::<CompleteRequestParams>(params),
        "initialize" => why::<InitializeRequestParams>(params),
        _ => None,
    };
    match (detail, params) {
        (Some(d), _) => format!("invalid params for `{method}`: {d}"),
        (None, Some(p)) if !p.is_object() => format!("invalid params for `{method}`: params must be an object"),
        (None, _) => format!("invalid params for `{method}`"),
    }
}

/// A readable request id: a string or an integer.
fn readable_id(v: &Value) -> Option<&Value> {
    v.get("id").filter(|id| id.is_string() || id.is_i64() || id.is_u64())
}

/// Classifies one incoming message (a stdio line or an HTTP body).
pub fn check(bytes: &[u8]) -> Checked {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF".as_slice()).unwrap_or(bytes);
    match serde_json::from_slice::<ClientJsonRpcMessage>(bytes) {
        Ok(JsonRpcMessage::Request(r)) => {
            if let ClientRequest::CustomRequest(c) = &r.request {
                if CLIENT_METHODS.contains(&c.method.as_str()) {
                    let id = serde_json::to_value(&r.id).ok();
                    return Checked::Reply(error_reply(id.as_ref(), INVALID_PARAMS, params_problem(&c.method, c.params.as_ref())));
                }
            }
            Checked::Message(Box::new(JsonRpcMessage::Request(r)))
        }
        Ok(m) => Checked::Message(Box::new(m)),
        Err(e) => {
            let v: Value = match serde_json::from_slice(bytes) {
                Ok(v) => v,
                Err(parse) => return Checked::Reply(error_reply(None, PARSE_ERROR, format!("parse error: the message is not JSON ({parse})"))),
            };
            let Some(obj) = v.as_object() else {
                return Checked::Reply(error_reply(None, INVALID_REQUEST, "invalid request: a message is one JSON object (batches are not supported)"));
            };
            let method = obj.get("method").and_then(Value::as_str);
            let Some(id) = readable_id(&v) else {
                if obj.contains_key("id") && !obj["id"].is_null() {
                    return Checked::Reply(error_reply(None, INVALID_REQUEST, "invalid request: `id` must be a string or an integer"));
                }
                if method.is_some() || obj.contains_key("result") || obj.contains_key("error") {
                    // A notification or a response: never answered.
                    tracing::debug!(error = %e, "ignoring a malformed notification or response");
                    return Checked::Ignore;
                }
                return Checked::Reply(error_reply(None, INVALID_REQUEST, "invalid request: no `method`"));
            };
            if obj.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
                return Checked::Reply(error_reply(Some(id), INVALID_REQUEST, "invalid request: `jsonrpc` must be \"2.0\""));
            }
            match method {
                None if obj.contains_key("result") || obj.contains_key("error") => Checked::Ignore,
                None => Checked::Reply(error_reply(Some(id), INVALID_REQUEST, "invalid request: `method` must be a string")),
                Some(m) if CLIENT_METHODS.contains(&m) => Checked::Reply(error_reply(Some(id), INVALID_PARAMS, params_problem(m, obj.get("params")))),
                Some(m) => Checked::Reply(error_reply(Some(id), METHOD_NOT_FOUND, format!("method not found: `{m}` ({e})"))),
            }
        }
    }
}

/// Lines written to the output, kept until written: a write cancelled half-way (rmcp polls
/// `receive` in a `select!`) resumes where it stopped, so lines never interleave.
struct Output<W> {
    out: W,
    pending: Vec<u8>,
}

impl<W: AsyncWrite + Unpin> Output<W> {
    async fn push(&mut self, mut line: Vec<u8>) -> std::io::Result<()> {
        line.push(b'\n');
        self.pending.extend_from_slice(&line);
        self.drain().await
    }

    async fn drain(&mut self) -> std::io::Result<()> {
        while !self.pending.is_empty() {
            let n = self.out.write(&self.pending).await?;
            if n == 0 {
                return Err(std::io::ErrorKind::WriteZero.into());
            }
            self.pending.drain(..n);
        }
        self.out.flush().await
    }
}

/// MCP over a byte stream of newline-delimited JSON (stdio), answering what rmcp's own stdio
/// transport drops or misnames ([`check`]); lines over [`MAX_LINE_BYTES`] get an error reply.
pub struct StdioTransport<R, W> {
    read: BufReader<R>,
    line: Vec<u8>,
    /// Dropping the rest of an over-long line.
    discarding: bool,
    write: Arc<tokio::sync::Mutex<Output<W>>>,
    /// Error replies not yet handed to the output.
    queued: Vec<u8>,
}

impl<R: AsyncRead + Unpin, W: AsyncWrite + Unpin> StdioTransport<R, W> {
    /// A transport reading `read` and writing `write`.
    pub fn new(read: R, write: W) -> Self {
        StdioTransport { read: BufReader::new(read), line: Vec::new(), discarding: false, write: Arc::new(tokio::sync::Mutex::new(Output { out: write, pending: Vec::new() })), queued: Vec::new() }
    }

    /// One whole line into `self.line` (cancel-safe); `Ok(false)` at the end of the input,
    /// `Err(())` for a line over the limit (dropped).
    async fn read_line(&mut self) -> std::io::Result<Result<bool, ()>> {
        loop {
            let (used, done, over) = {
                let buf = self.read.fill_buf().await?;
                if buf.is_empty() {
                    return Ok(Ok(false));
                }
                let nl = buf.iter().position(|b| *b == b'\n');
                let take = nl.map_or(buf.len(), |i| i + 1);
                if self.discarding {
                    if nl.is_some() {
                        self.discarding = false;
                    }
                    (take, false, false)
                } else if self.line.len() + take > MAX_LINE_BYTES {
                    self.line.clear();
                    self.discarding = nl.is_none();
                    (take, false, true)
                } else {
                    self.line.extend_from_slice(&buf[..take]);
                    (take, nl.is_some(), false)
                }
            };
            self.read.consume(used);
            if over {
                return Ok(Err(()));
            }
            if done {
                return Ok(Ok(true));
            }
        }
    }

    /// Queues an error reply; the next `receive` writes it (before reading on).
    fn queue(&mut self, v: &Value) {
        if let Ok(mut bytes) = serde_json::to_vec(v) {
            bytes.push(b'\n');
            self.queued.extend_from_slice(&bytes);
        }
    }
}

impl<R, W> rmcp::transport::Transport<RoleServer> for StdioTransport<R, W>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    type Error = std::io::Error;

    fn send(&mut self, item: ServerJsonRpcMessage) -> impl std::future::Future<Output = Result<(), Self::Error>> + Send + 'static {
        let write = self.write.clone();
        async move {
            let bytes = serde_json::to_vec(&item).map_err(std::io::Error::other)?;
            write.lock().await.push(bytes).await
        }
    }

    async fn receive(&mut self) -> Option<ClientJsonRpcMessage> {
        loop {
            {
                // Error replies, and output cut off by a cancelled `receive`, go out first.
                let write = self.write.clone();
                let mut w = write.lock().await;
                w.pending.append(&mut self.queued);
                if !w.pending.is_empty() && w.drain().await.is_err() {
                    return None;
                }
            }
            match self.read_line().await {
                Ok(Ok(true)) => {}
                Ok(Ok(false)) => return None,
                Ok(Err(())) => {
                    tracing::warn!(limit = MAX_LINE_BYTES, "dropping an MCP message over the size limit");
                    self.queue(&error_reply(None, INVALID_REQUEST, format!("invalid request: the message is larger than {MAX_LINE_BYTES} bytes")));
                    continue;
                }
                Err(e) => {
                    tracing::error!(error = %e, "reading stdin failed");
                    return None;
                }
            }
            let checked = {
                let t = self.line.strip_suffix(b"\n").unwrap_or(&self.line);
                let t = t.strip_suffix(b"\r").unwrap_or(t);
                (!t.iter().all(u8::is_ascii_whitespace)).then(|| check(t))
            };
            self.line.clear();
            match checked {
                Some(Checked::Message(m)) => return Some(*m),
                Some(Checked::Reply(v)) => self.queue(&v),
                Some(Checked::Ignore) | None => {}
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        let write = self.write.clone();
        let mut w = write.lock().await;
        w.pending.append(&mut self.queued);
        w.drain().await
    }
}
