//! The bridge from async clients to `std::io::Read`. One multi-threaded
//! tokio runtime, built on first use and never dropped (dropping a runtime
//! from inside async code panics; a process-wide one never is). A blob
//! stream runs as a task that pushes chunks into a bounded channel; the
//! reader pulls them with `blocking_recv`. Memory per stream is at most
//! [`CHANNEL_CHUNKS`] chunks, whatever the blob size, and dropping the
//! reader stops the task (its next send fails), which closes the
//! connection.

use bytes::Bytes;
use std::io::{self, Read};
use std::sync::OnceLock;
use tokio::runtime::Runtime;
use tokio::sync::mpsc;

/// Chunks buffered between a network task and its reader.
const CHANNEL_CHUNKS: usize = 8;

static RUNTIME: OnceLock<Result<Runtime, String>> = OnceLock::new();

/// The module's runtime.
pub(super) fn runtime() -> io::Result<&'static Runtime> {
    RUNTIME
        .get_or_init(|| {
            tokio::runtime::Builder::new_multi_thread().worker_threads(2).thread_name("auditor-image-io").enable_all().build().map_err(|e| e.to_string())
        })
        .as_ref()
        .map_err(|e| io::Error::other(format!("cannot start the I/O runtime: {e}")))
}

/// The sending half a task writes chunks (or one final error) into.
pub(super) type ChunkSender = mpsc::Sender<io::Result<Bytes>>;

/// A channel of chunks and the reader on its receiving end.
pub(super) fn channel() -> (ChunkSender, ChannelReader) {
    let (tx, rx) = mpsc::channel(CHANNEL_CHUNKS);
    (tx, ChannelReader { rx, current: Bytes::new(), state: State::Open })
}

/// Reads what a task sends; EOF when the task is done and the sender dropped.
pub(super) struct ChannelReader {
    rx: mpsc::Receiver<io::Result<Bytes>>,
    current: Bytes,
    state: State,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum State {
    Open,
    Ended,
    /// An error was returned; later reads fail too, never a false EOF.
    Failed,
}

impl Read for ChannelReader {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        while self.current.is_empty() {
            match self.state {
                State::Ended => return Ok(0),
                State::Failed => return Err(io::Error::other("the stream already failed")),
                State::Open => {}
            }
            match self.rx.blocking_recv() {
                Some(Ok(chunk)) => self.current = chunk,
                Some(Err(e)) => {
                    self.state = State::Failed;
                    return Err(e);
                }
                None => {
                    self.state = State::Ended;
                    return Ok(0);
                }
            }
        }
        let n = buf.len().min(self.current.len());
        buf[..n].copy_from_slice(&self.current.split_to(n));
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_flow_in_order_and_errors_end_the_stream() {
        let rt = runtime().unwrap();
        let (tx, mut reader) = channel();
        rt.spawn(async move {
            for part in ["ab", "", "cde"] {
                let _ = tx.send(Ok(Bytes::from(part))).await;
            }
            let _ = tx.send(Err(io::Error::other("cut"))).await;
        });
        let mut out = Vec::new();
        let err = reader.read_to_end(&mut out).unwrap_err();
        assert_eq!((out.as_slice(), err.to_string().as_str()), (&b"abcde"[..], "cut"));
        assert!(reader.read(&mut [0u8; 2]).is_err(), "no false EOF after an error");
    }

    #[test]
    fn dropping_the_reader_stops_the_sender() {
        let rt = runtime().unwrap();
        let (tx, reader) = channel();
        drop(reader);
        let sent = rt.block_on(async move { tx.send(Ok(Bytes::from_static(b"x"))).await.is_ok() });
        assert!(!sent);
    }
}
