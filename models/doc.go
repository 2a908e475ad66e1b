// Package models reads a refill project: its refill.yml, its SQL model files
// and its seeds. It parses and validates them, builds the dependency graph,
// enumerates partitions and renders templated SQL through a [Dialect].
//
// The package knows nothing of any warehouse: it does no I/O beyond reading
// the [fs.FS] it is given, every SQL fragment it produces comes from the
// Dialect passed in by the caller, and what a project's files say for one
// adapter (the keys the caller names in [LoadOptions].Adapters) is kept as
// written, with its positions, for that adapter to decode.
package models

// Time zones come with the program (time/tzdata), so that a model's
// timezone: means the same on a machine without the system's zone files.
import _ "time/tzdata"
