//! The built `basin` binary: `convert`, `formats` and `inspect`, first start, `admin`
//! commands, tokens, migrations, shutdown, and `worker` processes sharing a server's store.

mod convert;
mod inspect;
mod lifecycle;
mod workers;
