// Package nominicore turns off gosnowflake's minicore before gosnowflake
// initializes: unless the program is built with -tags minicore_disabled,
// gosnowflake's init writes a native library into a new directory under
// the system's temporary directory and loads it in the background, which a
// short-lived process (refill plan, a test binary) exits before cleaning
// up, leaving a gosnowflake-cgo* directory behind each time. refill needs
// nothing from it (it reports the client's version to Snowflake).
//
// Go initializes, among packages whose dependencies are ready, the one
// with the lexically smallest import path first, and this package needs
// only os: importing it beside gosnowflake runs this init before
// gosnowflake's. SF_DISABLE_MINICORE, when the user set it, is kept.
package nominicore

import "os"

func init() {
	if _, ok := os.LookupEnv("SF_DISABLE_MINICORE"); !ok {
		os.Setenv("SF_DISABLE_MINICORE", "true")
	}
}
