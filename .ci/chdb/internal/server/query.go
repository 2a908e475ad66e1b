package server

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/ClickHouse/ch-go/proto"
)

// reply is the answer to one query: its packets, and the connection's
// session after it (changed by SET and USE).
type reply struct {
	packets []byte
	session session
}

// query answers a Query packet: it reads the Data packets that follow it
// (the client's external tables, then an empty block), runs the statement
// in the engine and sends the result. While the statement waits or runs,
// a Cancel from the client cancels it (the answer is then EndOfStream)
// and a disconnect abandons it. It returns an error when the connection
// cannot go on.
func (c *conn) query(ctx context.Context, q *proto.Query, packets <-chan clientPacket) error {
	if q.Compression == proto.CompressionEnabled {
		// The client compresses the Data packets that follow: unreadable.
		c.write(exceptionPacket(newException(proto.ErrNotImplemented,
			"The chDB front end does not support compression: remove compress from the DSN")))
		return errClosed
	}
	external := 0
	for {
		var p clientPacket
		select {
		case p = <-packets:
		case <-ctx.Done():
			return ctx.Err()
		}
		switch {
		case p.err != nil:
			return p.err
		case p.code == proto.ClientCodeCancel:
			return c.write(endOfStream())
		case p.code != proto.ClientCodeData:
			c.write(exceptionPacket(newException(proto.ErrUnexpectedPacketFromClient,
				"Unexpected packet %s received from client while reading a query's data", p.code)))
			return errClosed
		}
		if len(p.data.Columns) == 0 && p.data.Rows == 0 {
			break
		}
		external++
	}

	run, cancel := context.WithCancel(ctx)
	defer cancel()
	replies := make(chan reply, 1)
	go func() { replies <- c.respond(run, q, external) }()
	for {
		select {
		case r := <-replies:
			c.session = r.session
			return c.write(r.packets)
		case p := <-packets:
			cancel()
			switch {
			case p.err != nil:
				return p.err
			case p.code == proto.ClientCodeCancel:
				r := <-replies
				c.session = r.session
				return c.write(endOfStream())
			}
			c.write(exceptionPacket(newException(proto.ErrUnexpectedPacketFromClient,
				"Unexpected packet %s received from client while a query runs", p.code)))
			return errClosed
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// respond runs the query in the engine and returns the packets that
// answer it: Data blocks (a header block first) and EndOfStream, or an
// Exception.
func (c *conn) respond(ctx context.Context, q *proto.Query, external int) reply {
	start := time.Now()
	r := reply{session: c.session}
	var b proto.Buffer
	rows, err := c.execute(ctx, q, external, &r.session, &b)
	log := c.log.With("query_id", q.ID, "query", q.Body, "elapsed", time.Since(start).Round(time.Microsecond))
	if err != nil {
		ex := ExceptionFrom(err)
		log.Debug("query failed", "code", ex.Code, "err", ex.Message)
		r.packets = exceptionPacket(ex)
		return r
	}
	log.Debug("query", "rows", rows)
	proto.ServerCodeEndOfStream.Encode(&b)
	r.packets = b.Buf
	return r
}

// execute runs one query in s, appending its Data packets to b, and
// returns the number of rows. SET and USE change s.
func (c *conn) execute(ctx context.Context, q *proto.Query, external int, s *session, b *proto.Buffer) (int, error) {
	if external > 0 {
		return 0, newException(proto.ErrNotImplemented, "The chDB front end does not support external tables")
	}
	st, err := parseStatement(q.Body)
	if err != nil {
		return 0, err
	}
	settings, err := querySettings(s.settings, q)
	if err != nil {
		return 0, err
	}
	req := Request{Database: s.database, Settings: settings, SQL: st.sql, Format: "Native"}
	switch st.kind {
	case statementInsertData:
		return 0, newException(proto.ErrNotImplemented,
			"The chDB front end does not take rows from the client: use INSERT ... SELECT, or write the rows after VALUES")
	case statementSet:
		for _, set := range st.settings {
			if err := checkSetting(set.Name); err != nil {
				return 0, err
			}
		}
		req.Settings, req.SQL = append(req.Settings, st.settings...), ""
		if _, err := c.srv.Engine.Run(ctx, req); err != nil {
			return 0, err
		}
		s.settings = mergeSettings(s.settings, st.settings)
		return 0, nil
	case statementUse:
		req.Database, req.SQL = st.database, ""
		if _, err := c.srv.Engine.Run(ctx, req); err != nil {
			return 0, err
		}
		s.database = st.database
		return 0, nil
	case statementRows:
		req.IfEmpty = "RowBinaryWithNamesAndTypes"
	}
	out, err := c.srv.Engine.Run(ctx, req)
	if err != nil {
		return 0, err
	}
	if out.Fallback {
		header, err := readNamesAndTypes(out.Data)
		if err != nil {
			return 0, err
		}
		dataPacket(b, c.revision, header)
		return 0, nil
	}
	blocks, err := readNativeBlocks(out.Data)
	if err != nil {
		return 0, newException(proto.ErrNotImplemented, "%v", err)
	}
	if len(blocks) == 0 {
		return 0, nil
	}
	header := block{Columns: blocks[0].Columns}
	dataPacket(b, c.revision, header)
	rows := 0
	for _, blk := range blocks {
		if blk.Rows > 0 {
			dataPacket(b, c.revision, blk)
			rows += blk.Rows
		}
	}
	return rows, nil
}

// querySettings returns the settings a query runs with: the session's
// (from SET), then the Query packet's, then its parameters as param_<name>
// settings, which the engine reads as query parameters.
func querySettings(session []Setting, q *proto.Query) ([]Setting, error) {
	out := append([]Setting(nil), session...)
	for _, s := range q.Settings {
		if err := checkSetting(s.Key); err != nil {
			return nil, err
		}
		v := s.Value
		if !s.Custom {
			v = quoteString(v) // the server parses the string as the setting's type
		} else if !isLiteral(v) {
			return nil, newException(proto.ErrBadArguments, "The value of custom setting %s is not a literal: %s", s.Key, excerpt(v))
		}
		out = append(out, Setting{Name: s.Key, Value: v})
	}
	for _, p := range q.Parameters {
		// The value is a field dump: a quoted string for clickhouse-go.
		if !isLiteral(p.Value) {
			return nil, newException(proto.ErrBadArguments, "The value of query parameter %s is not a literal: %s", p.Key, excerpt(p.Value))
		}
		out = append(out, Setting{Name: "param_" + p.Key, Value: p.Value})
	}
	return out, nil
}

// isLiteral reports whether v is one string or number literal, possibly
// negative: a value the engine may splice into SET name = v.
func isLiteral(v string) bool {
	l := &lexer{s: v}
	t, ok, err := l.next()
	if err == nil && ok && t.is("-") {
		t, ok, err = l.next()
	}
	if err != nil || !ok || t.kind != tokenString && t.kind != tokenNumber {
		return false
	}
	_, more, err := l.next()
	return err == nil && !more
}

// mergeSettings returns settings with later: each name of later replaces
// the earlier value of the name.
func mergeSettings(settings, later []Setting) []Setting {
	var out []Setting
	for _, s := range settings {
		if !slices.ContainsFunc(later, func(l Setting) bool { return l.Name == s.Name }) {
			out = append(out, s)
		}
	}
	return append(out, later...)
}

// checkSetting refuses settings the shared session cannot take back.
func checkSetting(name string) error {
	if strings.EqualFold(name, "readonly") {
		return newException(proto.ErrNotImplemented,
			"The chDB front end shares one session among all connections and cannot apply the readonly setting")
	}
	return nil
}

// quoteString renders s as an SQL string literal.
func quoteString(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
}
