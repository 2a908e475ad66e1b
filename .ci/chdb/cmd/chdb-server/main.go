// Command chdb-server serves ClickHouse's native (TCP) protocol over chDB,
// the embedded ClickHouse, so that clients such as clickhouse-go can be
// tested against a current ClickHouse engine where no server is installed.
//
//	CHDB_LIB_PATH=/path/to/libchdb.so chdb-server -data DIR [-listen 127.0.0.1:0] [-port-file FILE]
//
// It opens one chDB session on DIR (tables persist across restarts),
// listens on -listen (port 0: a free port), writes the port to -port-file
// once it accepts connections, and serves until SIGINT or SIGTERM. Logs go
// to stderr; -v logs every statement. The session's time zone is
// -timezone (UTC by default). See .ci/chdb/start for the usual way to run
// it, and package internal/server for what the protocol covers.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/refill/refill/ci/chdb/internal/chdbengine"
	"github.com/refill/refill/ci/chdb/internal/server"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stderr); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "chdb-server:", err)
		}
		os.Exit(2)
	}
}

// run parses args, opens chDB and serves until ctx is done.
func run(ctx context.Context, args []string, stderr io.Writer) error {
	flags := flag.NewFlagSet("chdb-server", flag.ContinueOnError)
	flags.SetOutput(stderr)
	listen := flags.String("listen", "127.0.0.1:0", "TCP `address` to listen on; port 0 picks a free port")
	data := flags.String("data", "", "chDB's data `directory` (required); tables persist across restarts")
	portFile := flags.String("port-file", "", "`file` to write the port to once connections are accepted")
	timezone := flags.String("timezone", "UTC", "the session's time `zone`")
	verbose := flags.Bool("v", false, "log every statement")
	if err := flags.Parse(args); err != nil {
		return err
	}
	if *data == "" || flags.NArg() > 0 {
		flags.Usage()
		return errors.New("-data is required, and there are no arguments")
	}
	level := slog.LevelInfo
	if *verbose {
		level = slog.LevelDebug
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))

	// chDB takes its time zone from TZ when the session starts.
	if err := os.Setenv("TZ", *timezone); err != nil {
		return err
	}
	engine, err := chdbengine.Open(*data, log)
	if err != nil {
		return err
	}
	defer engine.Close()
	info, err := serverInfo(ctx, engine)
	if err != nil {
		return err
	}
	if info.Timezone != *timezone {
		return fmt.Errorf("chDB's time zone is %s, not %s", info.Timezone, *timezone)
	}

	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		return err
	}
	if *portFile != "" {
		if err := writeFile(*portFile, strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)+"\n"); err != nil {
			ln.Close()
			return err
		}
	}
	log.Info("serving the native protocol", "addr", ln.Addr().String(), "version", fmt.Sprintf("%d.%d.%d", info.Major, info.Minor, info.Patch),
		"revision", server.Revision, "timezone", info.Timezone, "data", *data)
	srv := &server.Server{Engine: engine, Info: info, Log: log}
	if err := srv.Serve(ctx, ln); err != nil {
		return err
	}
	log.Info("stopped")
	return nil
}

// serverInfo reads the version and time zone chDB reports.
func serverInfo(ctx context.Context, engine *chdbengine.Engine) (server.Info, error) {
	info := server.Info{Name: "ClickHouse", DisplayName: "chdb-server"}
	out, err := engine.Scalar(ctx, "SELECT version(), timezone()")
	if err != nil {
		return info, fmt.Errorf("asking chDB its version: %w", err)
	}
	version, zone, _ := strings.Cut(out, "\t")
	info.Timezone = zone
	parts := strings.Split(version, ".")
	nums := []*int{&info.Major, &info.Minor, &info.Patch}
	for i := range min(len(parts), len(nums)) {
		if *nums[i], err = strconv.Atoi(parts[i]); err != nil {
			return info, fmt.Errorf("chDB's version %q: %w", version, err)
		}
	}
	return info, nil
}

// writeFile writes a file whole: readers never see it half-written.
func writeFile(name, content string) error {
	tmp, err := os.CreateTemp(filepath.Dir(name), ".port-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.WriteString(content); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), name)
}
