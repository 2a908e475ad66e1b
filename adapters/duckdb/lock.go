package duckdb

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"time"
)

// DuckDB lets one process at a time write a database file, and a second
// process's open fails naming only the holder's PID. refill writes a note
// beside the file while it holds it, so the second process can say which
// command holds the file and since when.

type holderNote struct {
	path string
	PID  int       `json:"pid"`
	Host string    `json:"host"`
	What string    `json:"what"`
	At   time.Time `json:"since"`
}

func notePath(db string) string { return db + ".refill-holder" }

func writeHolderNote(db, what string) *holderNote {
	host, _ := os.Hostname()
	n := &holderNote{path: notePath(db), PID: os.Getpid(), Host: host, What: what, At: time.Now().UTC()}
	if n.What == "" {
		n.What = "refill"
	}
	b, _ := json.Marshal(n)
	tmp := n.path + ".tmp"
	if os.WriteFile(tmp, b, 0o644) != nil || os.Rename(tmp, n.path) != nil {
		return nil // the note is a courtesy; the lock itself is DuckDB's
	}
	return n
}

func (n *holderNote) remove() {
	if n == nil {
		return
	}
	if cur := readHolderNote(n.path); cur != nil && cur.PID == n.PID {
		os.Remove(n.path)
	}
}

func readHolderNote(path string) *holderNote {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	var n holderNote
	if json.Unmarshal(b, &n) != nil {
		return nil
	}
	return &n
}

var pidRE = regexp.MustCompile(`PID (\d+)`)

// describeHolder names the process holding db from DuckDB's error message
// and, when it matches, refill's note.
func describeHolder(db, msg string) string {
	pid := 0
	if m := pidRE.FindStringSubmatch(msg); m != nil {
		pid, _ = strconv.Atoi(m[1])
	}
	if n := readHolderNote(notePath(db)); n != nil && (pid == 0 || n.PID == pid) {
		return fmt.Sprintf("%s (pid %d on %s, since %s)", n.What, n.PID, n.Host, n.At.Format(time.RFC3339))
	}
	if pid != 0 {
		return fmt.Sprintf("another process (pid %d)", pid)
	}
	return "another process"
}
