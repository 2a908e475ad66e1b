package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"

	"github.com/ClickHouse/ch-go/proto"
)

// conn is one client connection. Its goroutine (serve) owns the socket's
// writes and the session state; a second goroutine (readPackets) reads
// the client's packets, so that a Cancel or a disconnect is seen while a
// statement waits for or runs in the engine.
type conn struct {
	srv      *Server
	nc       net.Conn
	r        *proto.Reader
	log      *slog.Logger
	revision int // negotiated: min(client's, Revision)
	session  session
}

// session is a connection's state that statements run in.
type session struct {
	database string
	settings []Setting // from SET statements, in order
}

// clientPacket is one packet read from the client, or the error that
// ended reading.
type clientPacket struct {
	code  proto.ClientCode
	query *proto.Query // of a Query
	data  block        // of a Data packet: the block, without its data
	err   error
}

func newConn(s *Server, nc net.Conn) *conn {
	return &conn{srv: s, nc: nc, r: proto.NewReader(nc), log: s.log().With("client", nc.RemoteAddr().String())}
}

// serve runs the connection until the client leaves, ctx is done or the
// protocol breaks.
func (c *conn) serve(ctx context.Context) {
	defer c.nc.Close()
	if err := c.handshake(ctx); err != nil {
		level := slog.LevelInfo
		if errors.Is(err, io.EOF) {
			level = slog.LevelDebug // a probe that only connects
		}
		c.log.Log(ctx, level, "handshake failed", "err", err.Error())
		return
	}
	done := make(chan struct{})
	defer close(done)
	packets := make(chan clientPacket)
	go c.readPackets(done, packets)
	for {
		var p clientPacket
		select {
		case p = <-packets:
		case <-ctx.Done():
			return
		}
		err := p.err
		switch {
		case err != nil:
		case p.code == proto.ClientCodePing:
			err = c.write(pong())
		case p.code == proto.ClientCodeCancel:
			// Nothing is running: nothing to cancel.
		case p.code == proto.ClientCodeQuery:
			err = c.query(ctx, p.query, packets)
		default:
			c.write(exceptionPacket(newException(proto.ErrUnexpectedPacketFromClient, "Unexpected packet %s received from client", p.code)))
			err = errClosed
		}
		if err != nil {
			if !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) {
				c.log.Info("connection ends", "err", err.Error())
			}
			return
		}
	}
}

// handshake reads the client's Hello, checks its database, answers with
// the server's Hello and reads the addendum the revision implies.
func (c *conn) handshake(ctx context.Context) error {
	code, err := c.r.UVarInt()
	if err != nil {
		return err
	}
	if proto.ClientCode(code) != proto.ClientCodeHello {
		c.write(exceptionPacket(newException(proto.ErrUnexpectedPacketFromClient, "Unexpected packet from client (expected Hello, got %d)", code)))
		return fmt.Errorf("first packet %d is no Hello", code)
	}
	var hello proto.ClientHello
	if err := hello.Decode(c.r); err != nil {
		return fmt.Errorf("reading Hello: %w", err)
	}
	if hello.ProtocolVersion < minRevision {
		c.write(exceptionPacket(newException(proto.ErrUnsupportedMethod,
			"Client revision %d is older than %d, the oldest the chDB front end reads", hello.ProtocolVersion, minRevision)))
		return fmt.Errorf("client revision %d", hello.ProtocolVersion)
	}
	c.revision = min(hello.ProtocolVersion, Revision)
	c.session.database = hello.Database
	if c.session.database == "" {
		c.session.database = "default"
	}
	c.log = c.log.With("client_name", hello.Name)
	// A server refuses an unknown database in the Hello. Checking it waits
	// for the engine, which may be busy for a while: "default" always
	// exists and is not checked.
	if c.session.database != "default" {
		if _, err := c.srv.Engine.Run(ctx, Request{Database: c.session.database}); err != nil {
			c.write(exceptionPacket(ExceptionFrom(err)))
			return fmt.Errorf("database %s: %w", c.session.database, err)
		}
	}
	var b proto.Buffer
	info := c.srv.Info
	sh := proto.ServerHello{Name: info.Name, Major: info.Major, Minor: info.Minor, Revision: Revision,
		Timezone: info.Timezone, DisplayName: info.DisplayName, Patch: info.Patch}
	sh.EncodeAware(&b, c.revision)
	if err := c.write(b.Buf); err != nil {
		return err
	}
	if proto.FeatureAddendum.In(c.revision) {
		if _, err := c.r.Str(); err != nil { // the quota key
			return fmt.Errorf("reading the addendum: %w", err)
		}
	}
	c.log.Debug("connected", "revision", c.revision, "database", c.session.database, "user", hello.User)
	return nil
}

// readPackets reads packets and hands them to out until an error, which it
// hands over last, or until done is closed. It stops after a Query that
// asks for compression, whose Data packets it cannot read.
func (c *conn) readPackets(done <-chan struct{}, out chan<- clientPacket) {
	for {
		p := c.readPacket()
		select {
		case out <- p:
		case <-done:
			return
		}
		if p.err != nil || p.query != nil && p.query.Compression == proto.CompressionEnabled {
			return
		}
	}
}

// readPacket reads one packet. Data blocks are walked, not kept.
func (c *conn) readPacket() clientPacket {
	code, err := c.r.UVarInt()
	if err != nil {
		return clientPacket{err: err}
	}
	p := clientPacket{code: proto.ClientCode(code)}
	switch p.code {
	case proto.ClientCodePing, proto.ClientCodeCancel:
	case proto.ClientCodeQuery:
		p.query = &proto.Query{}
		if err := p.query.DecodeAware(c.r, c.revision); err != nil {
			p.err = fmt.Errorf("reading a Query: %w", err)
		}
	case proto.ClientCodeData:
		if _, err := c.r.Str(); err != nil { // the external table's name
			return clientPacket{err: fmt.Errorf("reading a Data packet: %w", err)}
		}
		var info proto.BlockInfo
		if err := info.Decode(c.r); err != nil {
			return clientPacket{err: fmt.Errorf("reading a Data packet: %w", err)}
		}
		p.data, err = readBlockBody(c.r, c.revision, func(typ string, rows int) ([]byte, error) {
			return nil, skipColumn(c.r, typ, rows)
		})
		if err != nil {
			p.err = fmt.Errorf("reading a Data packet: %w", err)
		}
	default:
		p.err = fmt.Errorf("unknown packet %d from the client", code)
	}
	return p
}

// write sends packets.
func (c *conn) write(b []byte) error {
	_, err := c.nc.Write(b)
	return err
}

func pong() []byte {
	var b proto.Buffer
	proto.ServerCodePong.Encode(&b)
	return b.Buf
}

func endOfStream() []byte {
	var b proto.Buffer
	proto.ServerCodeEndOfStream.Encode(&b)
	return b.Buf
}

func exceptionPacket(e *Exception) []byte {
	var b proto.Buffer
	proto.ServerCodeException.Encode(&b)
	ex := proto.Exception{Code: proto.Error(e.Code), Name: e.Name, Message: e.Message}
	ex.EncodeAware(&b, 0)
	return b.Buf
}

// dataPacket appends a Data packet holding b.
func dataPacket(buf *proto.Buffer, revision int, b block) {
	proto.ServerCodeData.Encode(buf)
	buf.PutString("") // no external table
	encodeBlock(buf, revision, b)
}
