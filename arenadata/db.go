package arenadata

import (
	"io"
	"strconv"
)

// DBItemCount is the number of rows in the items table.
const DBItemCount = 100000

// DBSeedFile is the Postgres seed, relative to the data tree's root: the database the
// async-db, api-4, api-16, crud and fortunes profiles query. The Postgres sidecar runs it at
// its first start (mounted as /docker-entrypoint-initdb.d/seed.sql).
//
// It is plain SQL in exactly this shape, which other code reads line by line (the
// validation takes the rows it expects from the items COPY block), so keep it:
//
//	CREATE TABLE items (id integer PRIMARY KEY, name text NOT NULL, ...);   one line
//	COPY items (id, name, category, price, quantity, active, tags, rating_score, rating_count) FROM stdin;
//	1<TAB>Compact Kettle<TAB>home<TAB>123<TAB>45<TAB>t<TAB>["new","sale"]<TAB>4<TAB>1234
//	...                                       one line per row, ids 1 to DBItemCount ascending
//	\.
//	CREATE TABLE users (id integer PRIMARY KEY, name text NOT NULL, email text NOT NULL);
//	COPY users (id, name, email) FROM stdin;
//	42<TAB>Arena Bench<TAB>bench@example.com  one line per user (4, one of them id 42)
//	\.
//	CREATE TABLE fortune (id integer PRIMARY KEY, message text NOT NULL);
//	COPY fortune (id, message) FROM stdin;
//	1<TAB>fortune: No such file or directory  one line per row (DBFortunes), ids 1 to FortuneCount
//	\.
//	ANALYZE;
//
// Lines end in LF; fields are separated by one tab, in the column order of the COPY line.
// Integers are decimal; active is t or f; tags is a compact JSON array of strings
// (["new","sale"], no spaces). Names, categories, tags, emails and fortune messages contain no
// tab, newline or backslash, so COPY's text format needs no escapes (messages are UTF-8). There is deliberately no index on
// price: the async-db query (price BETWEEN min AND max) scans, as in the arena.
const DBSeedFile = DBDir + "/seed.sql"

// DBDir holds the database seed.
const DBDir = "db"

// A DBItem is one row of the items table. The columns are Item's, with the rating split
// into rating_score and rating_count.
type DBItem struct {
	ID          int
	Name        string
	Category    string
	Price       int
	Quantity    int
	Active      bool
	Tags        []string
	RatingScore int
	RatingCount int
}

// DBItems returns the rows of the items table, ids 1 to DBItemCount in order. They are drawn
// like Dataset's items (the same categories, names, tags and ranges: prices 1 to 500, so every
// price range the checks query holds thousands of rows and 9999 to 9999 none) from a source
// of their own, so dataset.json does not depend on them.
func DBItems() []DBItem {
	r := newRNG("db/items")
	rows := make([]DBItem, DBItemCount)
	for i := range rows {
		it := randomItem(r, i+1)
		rows[i] = DBItem{
			ID: it.ID, Name: it.Name, Category: it.Category, Price: it.Price, Quantity: it.Quantity,
			Active: it.Active, Tags: it.Tags, RatingScore: it.Rating.Score, RatingCount: it.Rating.Count,
		}
	}
	return rows
}

// dbUsers are the rows of the users table (production-stack's /api/me asks for user 42).
var dbUsers = []struct {
	id          int
	name, email string
}{
	{1, "Ada Lovelace", "ada@example.com"},
	{2, "Alan Turing", "alan@example.com"},
	{3, "Grace Hopper", "grace@example.com"},
	{42, "Arena Bench", "bench@example.com"},
}

const (
	seedItemsTable = "CREATE TABLE items (id integer PRIMARY KEY, name text NOT NULL, category text NOT NULL, " +
		"price integer NOT NULL, quantity integer NOT NULL, active boolean NOT NULL, tags jsonb NOT NULL, " +
		"rating_score integer NOT NULL, rating_count integer NOT NULL);\n"
	seedItemsCopy    = "COPY items (id, name, category, price, quantity, active, tags, rating_score, rating_count) FROM stdin;\n"
	seedUsersTable   = "CREATE TABLE users (id integer PRIMARY KEY, name text NOT NULL, email text NOT NULL);\n"
	seedUsersCopy    = "COPY users (id, name, email) FROM stdin;\n"
	seedFortuneTable = "CREATE TABLE fortune (id integer PRIMARY KEY, message text NOT NULL);\n"
	seedFortuneCopy  = "COPY fortune (id, message) FROM stdin;\n"
	seedEndCopy      = "\\.\n"
	seedAnalyze      = "ANALYZE;\n"
)

// writeSeed writes DBSeedFile. Rows are appended to one buffer, written in chunks: the
// file is about 8 MB and takes a few tens of milliseconds.
func writeSeed(w io.Writer) error {
	buf := make([]byte, 0, 128<<10)
	flush := func(force bool) error {
		if len(buf) < 120<<10 && !force {
			return nil
		}
		_, err := w.Write(buf)
		buf = buf[:0]
		return err
	}
	buf = append(buf, seedItemsTable...)
	buf = append(buf, seedItemsCopy...)
	for _, it := range DBItems() {
		buf = strconv.AppendInt(buf, int64(it.ID), 10)
		buf = append(buf, '\t')
		buf = append(buf, it.Name...)
		buf = append(buf, '\t')
		buf = append(buf, it.Category...)
		buf = append(buf, '\t')
		buf = strconv.AppendInt(buf, int64(it.Price), 10)
		buf = append(buf, '\t')
		buf = strconv.AppendInt(buf, int64(it.Quantity), 10)
		if it.Active {
			buf = append(buf, "\tt\t["...)
		} else {
			buf = append(buf, "\tf\t["...)
		}
		for i, tag := range it.Tags {
			if i > 0 {
				buf = append(buf, ',')
			}
			buf = append(buf, '"')
			buf = append(buf, tag...)
			buf = append(buf, '"')
		}
		buf = append(buf, "]\t"...)
		buf = strconv.AppendInt(buf, int64(it.RatingScore), 10)
		buf = append(buf, '\t')
		buf = strconv.AppendInt(buf, int64(it.RatingCount), 10)
		buf = append(buf, '\n')
		if err := flush(false); err != nil {
			return err
		}
	}
	buf = append(buf, seedEndCopy...)
	buf = append(buf, seedUsersTable...)
	buf = append(buf, seedUsersCopy...)
	for _, u := range dbUsers {
		buf = strconv.AppendInt(buf, int64(u.id), 10)
		buf = append(buf, '\t')
		buf = append(buf, u.name...)
		buf = append(buf, '\t')
		buf = append(buf, u.email...)
		buf = append(buf, '\n')
	}
	buf = append(buf, seedEndCopy...)
	buf = append(buf, seedFortuneTable...)
	buf = append(buf, seedFortuneCopy...)
	for _, f := range DBFortunes() {
		buf = strconv.AppendInt(buf, int64(f.ID), 10)
		buf = append(buf, '\t')
		buf = append(buf, f.Message...)
		buf = append(buf, '\n')
	}
	buf = append(buf, seedEndCopy...)
	buf = append(buf, seedAnalyze...)
	return flush(true)
}
