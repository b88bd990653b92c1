// Package history keeps every hwtest run in a DuckDB database: runs with their
// detection and provenance, every cell with its checks, outputs and raw latency
// samples. It answers what the matrix files of one run cannot: the current state of
// every cell across runs, a cell's history, and the data a diff between runs needs.
// It also offers the views of the system hwtest replaces (hardware_results,
// hardware_detection) so its users' SQL runs unchanged.
//
// DuckDB lets one process write a database file at a time (several may read it when
// none writes). hwtest opens the file only for as long as one command needs it and,
// when another hwtest holds it, waits with a message instead of failing.
package history

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/duckdb/duckdb-go/v2"
)

// DefaultFile is where the history lives, relative to the repository root.
const DefaultFile = ".hwtest/history.duckdb"

// EnvDB names another database file, as --db does.
const EnvDB = "HWTEST_DB"

// Mode says what a command does with the history.
type Mode int

const (
	// ReadOnly opens an existing history; several readers may share it.
	ReadOnly Mode = iota
	// ReadWrite creates the file when it is missing and takes DuckDB's writer lock.
	ReadWrite
)

// DB is an open history database.
type DB struct {
	path      string
	connector *duckdb.Connector
	sql       *sql.DB
	mode      Mode
}

// ErrNoHistory: there is no database at the path yet.
var ErrNoHistory = errors.New("no history yet")

// Options tune Open; the zero value is what commands use.
type Options struct {
	// Log receives the message printed while waiting for another process's lock.
	Log io.Writer
	// Wait bounds that wait; 0 means 10 minutes (a whole `hwtest run` storing its
	// cells takes well under a second, so a longer wait means a stuck holder).
	Wait time.Duration
}

// duckdbMagic is what every DuckDB database file holds at byte 8 of its header.
var duckdbMagic = []byte("DUCK")

// Open opens the history at path. A file that is not a DuckDB database, or a DuckDB
// database that is not a hwtest history, is refused with its name and left as it is;
// a history of a newer schema is refused with both versions; an older one is
// migrated in one transaction (by a writer; a reader migrates it first, too).
func Open(ctx context.Context, path string, mode Mode, o Options) (*DB, error) {
	if err := checkFile(path, mode); err != nil {
		return nil, err
	}
	if mode == ReadWrite {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return nil, fmt.Errorf("history %s: %w", path, err)
		}
	}
	db, err := openWaiting(ctx, path, mode, o)
	if err != nil {
		return nil, err
	}
	version, err := db.schemaVersion(ctx)
	if err != nil {
		db.Close()
		return nil, err
	}
	switch {
	case version > SchemaVersion:
		db.Close()
		return nil, fmt.Errorf("history %s has schema version %d; this hwtest knows versions up to %d: use a newer hwtest, or another file with --db", path, version, SchemaVersion)
	case version < SchemaVersion && mode == ReadOnly:
		// Migrate as a writer, then read as asked.
		db.Close()
		w, err := Open(ctx, path, ReadWrite, o)
		if err != nil {
			return nil, err
		}
		w.Close()
		return Open(ctx, path, ReadOnly, o)
	case version < SchemaVersion:
		if err := db.migrate(ctx, version, migrations); err != nil {
			db.Close()
			return nil, err
		}
	}
	return db, nil
}

// checkFile refuses what DuckDB must never be given: something that is not a
// regular file, or a file with something else in it. A file shorter than DuckDB's
// header is left to DuckDB: it may be another hwtest's history being created this
// instant (DuckDB then says it is locked, and Open waits), and DuckDB refuses a
// short file that is not its own without writing to it (notDuckDB words that).
func checkFile(path string, mode Mode) error {
	fi, err := os.Stat(path)
	if errors.Is(err, os.ErrNotExist) {
		if mode == ReadOnly {
			return fmt.Errorf("%w at %s: `hwtest run` (or `hwtest import`) stores runs there", ErrNoHistory, path)
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("history %s: %w", path, err)
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("history %s is not a regular file (%s): point --db or %s at a file", path, fi.Mode().Type(), EnvDB)
	}
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("history %s: %w", path, err)
	}
	defer f.Close()
	head := make([]byte, 12)
	if n, _ := io.ReadFull(f, head); n == len(head) && !bytes.Equal(head[8:12], duckdbMagic) {
		return notDuckDB(path, fi.Size())
	}
	return nil
}

func notDuckDB(path string, size int64) error {
	return fmt.Errorf("history %s is not a DuckDB database (%d bytes; no DuckDB header): it was left as it is; move it away or point --db or %s at another file", path, size, EnvDB)
}

// lockHolder finds the pid in DuckDB's "Conflicting lock is held in … (PID n)".
var lockHolder = regexp.MustCompile(`Conflicting lock is held in (.*) \(PID (\d+)\)`)

// openWaiting opens the file, waiting while another process holds DuckDB's lock.
func openWaiting(ctx context.Context, path string, mode Mode, o Options) (*DB, error) {
	wait := o.Wait
	if wait <= 0 {
		wait = 10 * time.Minute
	}
	start := time.Now()
	deadline := start.Add(wait)
	said := false
	for {
		db, err := open(path, mode)
		if err == nil {
			if said && o.Log != nil {
				fmt.Fprintf(o.Log, "history: %s is free, going on\n", path)
			}
			return db, nil
		}
		m := lockHolder.FindStringSubmatch(err.Error())
		if m == nil {
			if strings.Contains(err.Error(), "not a valid DuckDB database file") {
				size := int64(-1)
				if fi, serr := os.Stat(path); serr == nil {
					size = fi.Size()
				}
				// A file shorter than a header may be one another hwtest is creating
				// right now: give it a moment before calling it foreign.
				if size < 12 && time.Since(start) < 2*time.Second {
					time.Sleep(100 * time.Millisecond)
					continue
				}
				return nil, notDuckDB(path, size)
			}
			return nil, fmt.Errorf("history %s: %w", path, err)
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("history %s: still locked by pid %s (%s) after %v; nothing was written to it", path, m[2], m[1], wait)
		}
		if !said && o.Log != nil {
			pid, _ := strconv.Atoi(m[2])
			fmt.Fprintf(o.Log, "history: %s is in use by pid %d (%s); waiting for it (DuckDB allows one writer at a time)\n", path, pid, m[1])
			said = true
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("history %s: stopped while waiting for pid %s's lock: %w", path, m[2], ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func open(path string, mode Mode) (*DB, error) {
	dsn := path
	if mode == ReadOnly {
		dsn += "?access_mode=READ_ONLY"
	}
	c, err := duckdb.NewConnector(dsn, nil)
	if err != nil {
		return nil, err
	}
	db := sql.OpenDB(c)
	// One connection: DuckDB runs queries in parallel inside it, and a transaction
	// and its appender must share it.
	db.SetMaxOpenConns(1)
	return &DB{path: path, connector: c, sql: db, mode: mode}, nil
}

// Path is the database file.
func (db *DB) Path() string { return db.path }

// Close closes the database, releasing DuckDB's lock on the file.
func (db *DB) Close() error {
	err := db.sql.Close()
	if cerr := db.connector.Close(); err == nil {
		err = cerr
	}
	return err
}

// SQL is the database for queries the history's own readers do not cover.
func (db *DB) SQL() *sql.DB { return db.sql }

// Query runs one SQL statement from a user (`hwtest query`). A history opened
// ReadOnly cannot be changed by it.
func (db *DB) Query(ctx context.Context, query string) (*sql.Rows, error) {
	rows, err := db.sql.QueryContext(ctx, strings.TrimSpace(query))
	if err != nil {
		return nil, fmt.Errorf("query: %w", err)
	}
	return rows, nil
}
