package main

import (
	"context"
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
)

// version is refill's version as the build stamped it (the Makefile sets
// it to git describe's); empty when the build did not.
var version string

// versionText is what refill --version prints: refill's version (its
// module's, the commit the Makefile stamped, or the commit of a build
// from a checkout that Go recorded), Go's, the libraries of the engines
// linked in (DuckDB's) and each engine's driver's.
func versionText(ctx context.Context) string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return fmt.Sprintf("refill (no build information) %s\n", runtime.Version())
	}
	return formatVersion(ctx, version, info)
}

// formatVersion is versionText for a stamped version (or "") and the
// binary's build information.
func formatVersion(ctx context.Context, stamped string, info *debug.BuildInfo) string {
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
	for _, e := range engines {
		if e.Library == nil {
			continue
		}
		if v, err := e.Library(ctx); err == nil {
			fmt.Fprintf(&b, "  %-19s %s\n", e.Title+" library", v)
		}
	}
	deps := map[string]string{}
	for _, d := range info.Deps {
		v := d.Version
		if d.Replace != nil {
			v = d.Replace.Version + " (replaces " + d.Version + ")"
		}
		deps[d.Path] = v
	}
	for _, e := range engines {
		v := deps[e.Driver]
		if v == "" {
			v = "(not linked)"
		}
		fmt.Fprintf(&b, "  %-19s %s %s\n", e.Title+" driver", e.Driver, v)
	}
	return b.String()
}
