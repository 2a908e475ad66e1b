// Package server serves the ClickHouse native (TCP) protocol over an
// Engine, as far as clickhouse-go v2 needs it: Hello, Ping, Query with its
// settings and parameters, Cancel; results as Data blocks preceded by a
// header block, exceptions with their ClickHouse code, EndOfStream.
//
// Every connection has its own current database and SET settings, which
// the server passes with each statement to the one engine session that
// all connections share. What a shared embedded session cannot give is
// refused with an exception naming the limit: data sent by the client
// (INSERT ... VALUES without rows in the text, external tables),
// compression, the readonly setting.
package server

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"sync"
)

// Revision is the protocol revision the server implements: 54460, the
// revision of clickhouse-go v2 (DBMS_TCP_PROTOCOL_VERSION). Clients with
// a later revision negotiate down to it. From it follow the fields the
// server reads and writes: the time zone, display name and patch in its
// Hello (54058, 54372, 54401), the client's quota-key addendum after the
// Hello (54458), the client info of a query up to its parallel-replica
// fields (54453), query parameters (54459), and a custom-serialization
// flag after each column of a block (54454), always 0. Revisions from
// 54461 on would add password complexity rules and a nonce to the Hello,
// sparse columns and more, which the server has no use for.
const Revision = 54460

// minRevision is the oldest client revision the server reads: settings
// are sent as strings from 54429 on.
const minRevision = 54429

// Info is what the server announces in its Hello.
type Info struct {
	Name        string // "ClickHouse"
	DisplayName string // shown by clients, e.g. "chdb-server"
	Major       int
	Minor       int
	Patch       int
	Timezone    string // the time zone of DateTime values without one
}

// Server serves the native protocol over Engine.
type Server struct {
	Engine Engine
	Info   Info
	Log    *slog.Logger
}

// Serve accepts connections on ln and serves each in its own goroutine
// until ctx is done; then it closes ln and every connection, waits for
// their goroutines and returns nil. It returns ln's error if Accept fails
// otherwise. Statements already running in the engine are not waited
// for: close the engine after Serve returns.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		<-ctx.Done()
		ln.Close()
	}()
	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		nc, err := ln.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			stop := context.AfterFunc(ctx, func() { nc.Close() })
			defer stop()
			newConn(s, nc).serve(ctx)
		}()
	}
}

// log returns the server's logger, or a discarding one.
func (s *Server) log() *slog.Logger {
	if s.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return s.Log
}

// errClosed ends a connection after the server answered with an
// exception that leaves it unusable.
var errClosed = errors.New("connection closed by the server")
