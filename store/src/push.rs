//! `acc room push`: the workspace's SQLite store copied into an empty room on PostgreSQL, in
//! one transaction of the room, the local store only read.

use rusqlite::types::Value;
use tokio_postgres::types::{IsNull, ToSql as PgToSql, Type};

use crate::backend::Backend;
use crate::db::{Arg, Conn};
use crate::{Store, StoreError, StoreErrorKind, StoreResult};

/// The tables a push copies, each before those that refer to it. The workspace row and
/// `acc_meta` are the room's own; delivery bindings are not copied: they are ephemeral, tied
/// to this machine's live client processes, and remade as those sessions next run.
pub const PUSHED_TABLES: &[&str] = &[
    "participants",
    "sessions",
    "intents",
    "claims",
    "messages",
    "receipts",
    "decision_links",
    "events",
];

/// One table's rows, read from SQLite.
struct Table {
    name: &'static str,
    columns: Vec<String>,
    rows: Vec<Vec<Cell>>,
}

/// A SQLite value bound to a PostgreSQL parameter of whatever type the room's column has
/// (SQLite's integers go to `BIGINT`, its text to `TEXT`).
#[derive(Debug)]
struct Cell(Value);

impl PgToSql for Cell {
    fn to_sql(
        &self,
        ty: &Type,
        out: &mut bytes::BytesMut,
    ) -> Result<IsNull, Box<dyn std::error::Error + Sync + Send>> {
        match &self.0 {
            Value::Null => Ok(IsNull::Yes),
            Value::Integer(n) if *ty == Type::BOOL => (*n != 0).to_sql(ty, out),
            Value::Integer(n) => n.to_sql(ty, out),
            Value::Real(x) => x.to_sql(ty, out),
            Value::Text(text) => text.to_sql(ty, out),
            Value::Blob(bytes) => bytes.to_sql(ty, out),
        }
    }

    fn accepts(_ty: &Type) -> bool {
        true
    }

    tokio_postgres::types::to_sql_checked!();
}

impl Arg for Cell {
    fn lite(&self) -> &dyn rusqlite::ToSql {
        &self.0
    }
    fn pg(&self) -> &(dyn PgToSql + Sync) {
        self
    }
    /// Its column's type decides (a NULL has none of its own): the statement is prepared.
    fn pg_type(&self) -> Option<Type> {
        None
    }
}

/// What a push copied: each table's rows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pushed {
    /// The room's location.
    pub room: String,
    /// Rows copied, by table, in [`PUSHED_TABLES`] order.
    pub rows: Vec<(&'static str, u64)>,
    /// The room's layout upgrade made first, when an older build had created it.
    pub upgraded: Option<crate::layout::Plan>,
}

impl Store {
    /// Copy this SQLite store into `room`, a room on PostgreSQL holding no records yet (no
    /// participant, session, message or event), in one transaction of the room; refused,
    /// changing nothing, when the room holds any. A room of an older layout (created by an
    /// older build) is upgraded first, as a first write would, so every column this store
    /// holds has its place. This store is only read.
    pub fn push_into(&mut self, room: &mut Store) -> StoreResult<Pushed> {
        let location = room.location();
        let (Backend::Lite(lite), Backend::Pg(target)) = (&mut self.0, &mut room.0) else {
            return Err(StoreError::internal(
                "a push goes from a SQLite store to a room on PostgreSQL",
            ));
        };
        let (tables, counters) = lite.read(|r| -> StoreResult<_> {
            let Conn::Lite(conn) = r.conn else {
                return Err(StoreError::internal("a SQLite store read another backend"));
            };
            let tables = PUSHED_TABLES
                .iter()
                .map(|name| read_table(conn, name))
                .collect::<StoreResult<Vec<_>>>()?;
            let counters = conn
                .prepare("SELECT name, seq FROM sqlite_sequence")?
                .query_map([], |row| {
                    Ok((row.get::<_, String>(0)?, row.get::<_, i64>(1)?))
                })?
                .collect::<Result<Vec<_>, _>>()?;
            Ok((tables, counters))
        })?;
        let upgraded = target.upgrade()?;
        target.transaction(false, |conn| -> StoreResult<_> {
            let held: i64 = conn.value(crate::pg::RECORDS_HELD, crate::db::args![])?;
            if held > 0 {
                return Err(StoreError::new(
                    StoreErrorKind::Refused,
                    format!(
                        "the room at {location} already holds records ({held} participants, sessions, messages and events); a push goes only into an empty room, and nothing was copied"
                    ),
                ));
            }
            let mut rows = Vec::new();
            for table in &tables {
                let sql = format!(
                    "INSERT INTO {}({}) VALUES ({})",
                    table.name,
                    table.columns.join(", "),
                    (1..=table.columns.len())
                        .map(|n| format!("?{n}"))
                        .collect::<Vec<_>>()
                        .join(", ")
                );
                for row in &table.rows {
                    let args: Vec<&dyn Arg> = row.iter().map(|c| c as &dyn Arg).collect();
                    conn.execute(&sql, &args)?;
                }
                rows.push((table.name, table.rows.len() as u64));
            }
            for (name, seq) in &counters {
                conn.execute(crate::pg::SET_COUNTER, crate::db::args![name.as_str(), *seq])?;
            }
            Ok(rows)
        })
        .map(|rows| Pushed {
            room: location.clone(),
            rows,
            upgraded,
        })
    }
}

fn read_table(conn: &rusqlite::Connection, name: &'static str) -> StoreResult<Table> {
    let mut statement = conn
        .prepare(&format!("SELECT * FROM {name} ORDER BY rowid"))
        .or_else(|_| conn.prepare(&format!("SELECT * FROM {name}")))?;
    let columns: Vec<String> = statement
        .column_names()
        .iter()
        .map(|c| (*c).to_string())
        .collect();
    let width = columns.len();
    let rows = statement
        .query_map([], |row| {
            (0..width)
                .map(|i| row.get::<_, Value>(i).map(Cell))
                .collect::<Result<Vec<_>, _>>()
        })?
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Table {
        name,
        columns,
        rows,
    })
}
