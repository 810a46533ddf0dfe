//! `acc-read-floor STORE KEY`: the floor of a process that reads the store once. It starts,
//! opens the store as ACC does (WAL) and reads one session by its key, as a hook with nothing
//! to do must at least; `acc-bench hook` prints the hook's time beside it. Only SQLite is linked.

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [store, key] = args.as_slice() else {
        eprintln!("usage: acc-read-floor STORE KEY");
        std::process::exit(2);
    };
    let conn = rusqlite::Connection::open_with_flags(
        store,
        rusqlite::OpenFlags::SQLITE_OPEN_READ_WRITE | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .expect("open the store");
    let found: i64 = conn
        .query_row(
            "SELECT count(*) FROM sessions WHERE session_key = ?1",
            [key],
            |r| r.get(0),
        )
        .expect("read");
    std::process::exit(i32::from(found != 1));
}
