package main

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
)

// drivers are the modules whose versions --version reports, with what
// they are.
var drivers = []struct{ path, what string }{
	{"github.com/duckdb/duckdb-go/v2", "DuckDB driver"},
	{"github.com/ClickHouse/clickhouse-go/v2", "ClickHouse driver"},
	{"github.com/snowflakedb/gosnowflake", "Snowflake driver"},
}

// version is refill's version as the build stamped it (the Makefile sets
// it to git describe's); empty when the build did not.
var version string

// versionText is what refill --version prints: refill's version (its
// module's, the commit the Makefile stamped, or the commit of a build
// from a checkout that Go recorded), Go's, the DuckDB
// library's and each driver's.
func versionText() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return fmt.Sprintf("refill (no build information) %s\n", runtime.Version())
	}
	return formatVersion(version, info)
}

// formatVersion is versionText for a stamped version (or "") and the
// binary's build information.
func formatVersion(stamped string, info *debug.BuildInfo) string {
	version := info.Main.Version
	if stamped != "" {
		version = stamped
	} else if version == "" || version == "(devel)" {
		version = "devel"
		settings := map[string]string{}
		for _, s := range info.Settings {
			settings[s.Key] = s.Value
		}
		if rev := settings["vcs.revision"]; rev != "" {
			version += " " + rev[:min(12, len(rev))]
			if settings["vcs.modified"] == "true" {
				version += "+modified"
			}
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "refill %s, %s %s/%s\n", version, runtime.Version(), runtime.GOOS, runtime.GOARCH)
	if v, err := duckdbEngineVersion(); err == nil {
		fmt.Fprintf(&b, "  DuckDB library      %s\n", v)
	}
	deps := map[string]string{}
	for _, d := range info.Deps {
		v := d.Version
		if d.Replace != nil {
			v = d.Replace.Version + " (replaces " + d.Version + ")"
		}
		deps[d.Path] = v
	}
	for _, d := range drivers {
		v := deps[d.path]
		if v == "" {
			v = "(not linked)"
		}
		fmt.Fprintf(&b, "  %-19s %s %s\n", d.what, d.path, v)
	}
	return b.String()
}
