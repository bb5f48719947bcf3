//! Room on the stack for the evaluators' bounded recursion (the bash
//! parser and interpreter, the Python evaluator). Starting a thread with
//! its own large stack for every evaluation costs a stack mapped, faulted
//! in and unmapped each time, and those mappings serialise the threads of
//! a whole-tree read; so an evaluation runs where it is when the thread it
//! is on has the room left ([`stacker::remaining_stack`]), and the reader
//! evaluates a tree on a pool of threads made with that room ([`pool`]).

/// Run `f` with at least `room` bytes of stack: on this thread when it has
/// them, else on a thread named `name` with a stack of that size (reserved,
/// not committed: only what the recursion touches is used). `None` if the
/// thread could not be started or `f` panicked.
pub fn with_room<T: Send>(name: &str, room: usize, f: impl FnOnce() -> T + Send) -> Option<T> {
    if stacker::remaining_stack().is_some_and(|left| left >= room) {
        return std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).ok();
    }
    std::thread::scope(|scope| std::thread::Builder::new().name(name.into()).stack_size(room).spawn_scoped(scope, f).ok()?.join().ok())
}

/// A pool of as many threads as the machine's cores, each with a stack of
/// `size` bytes, so that [`with_room`] runs in place on them.
pub fn pool(size: usize) -> Option<rayon::ThreadPool> {
    rayon::ThreadPoolBuilder::new().stack_size(size).thread_name(|i| format!("evaluate-{i}")).build().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn work_runs_in_place_where_there_is_room_and_on_a_thread_where_not() {
        let name = || std::thread::current().name().map(str::to_string);
        let big = 64 << 20;
        let pool = pool(big + (8 << 20)).expect("a pool");
        let inside = pool.install(|| with_room("elsewhere", big, name)).expect("ran");
        assert!(inside.is_some_and(|n| n.starts_with("evaluate-")), "in place on the pool");
        let small = std::thread::Builder::new().stack_size(1 << 20).spawn(move || with_room("elsewhere", big, name)).unwrap().join().unwrap();
        assert_eq!(small.expect("ran").as_deref(), Some("elsewhere"));
        assert_eq!(pool.install(|| with_room("x", big, || -> u8 { panic!("a bug") })), None, "a panic is contained");
    }
}
