package clickhouse

import "testing"

// The engine clauses are as 18.16's SHOW CREATE TABLE prints them.
func TestUnreplicated(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"ENGINE = ReplicatedMergeTree('/clickhouse/refill/{shard}/db/t_local/a1', '{replica}') PARTITION BY toYYYYMM(d) ORDER BY d SETTINGS index_granularity = 8192",
			"ENGINE = MergeTree() PARTITION BY toYYYYMM(d) ORDER BY d SETTINGS index_granularity = 8192"},
		{"ENGINE = ReplicatedReplacingMergeTree('/p, with a comma', '{replica}', `version`) ORDER BY (a, b)",
			"ENGINE = ReplacingMergeTree(`version`) ORDER BY (a, b)"},
		{"ENGINE = ReplicatedSummingMergeTree('/p\\'q', '{replica}', (x, y)) ORDER BY k", "ENGINE = SummingMergeTree((x, y)) ORDER BY k"},
		{"ENGINE = MergeTree PARTITION BY d ORDER BY d", "ENGINE = MergeTree PARTITION BY d ORDER BY d"},
		{"ENGINE = Distributed(refill, db, t_local, rand())", "ENGINE = Distributed(refill, db, t_local, rand())"},
	} {
		if got := unreplicated(c.in); got != c.want {
			t.Errorf("unreplicated(%s)\n = %s\nwant %s", c.in, got, c.want)
		}
	}
}

func TestReplicated(t *testing.T) {
	d := Dialect{}
	for _, c := range []struct{ in, want string }{
		{"ENGINE = MergeTree() PARTITION BY toYYYYMM(d) ORDER BY d", "ENGINE = ReplicatedMergeTree('/x/{shard}/t', '{replica}') PARTITION BY toYYYYMM(d) ORDER BY d"},
		{"ENGINE = MergeTree PARTITION BY d ORDER BY d", "ENGINE = ReplicatedMergeTree('/x/{shard}/t', '{replica}') PARTITION BY d ORDER BY d"},
		{"ENGINE = ReplacingMergeTree(v) ORDER BY k", "ENGINE = ReplicatedReplacingMergeTree('/x/{shard}/t', '{replica}', v) ORDER BY k"},
	} {
		got, err := replicated(d, c.in, "/x/{shard}/t")
		if err != nil || got != c.want {
			t.Errorf("replicated(%s)\n = %s, %v\nwant %s", c.in, got, err, c.want)
		}
	}
	if _, err := replicated(d, "ENGINE = Log", "/x"); err == nil {
		t.Error("replicated accepted a Log table")
	}
}

func TestDistributedOf(t *testing.T) {
	for _, c := range []struct {
		in   string
		want distributed
		ok   bool
	}{
		{"ENGINE = Distributed(refill, db, t_local, rand())", distributed{"refill", "db", "t_local", "rand()"}, true},
		{"ENGINE = Distributed('refill', 'db', 't_local', cityHash64(a, b))", distributed{"refill", "db", "t_local", "cityHash64(a, b)"}, true},
		{"ENGINE = Distributed(refill, db, t_local)", distributed{"refill", "db", "t_local", ""}, true},
		{"ENGINE = ReplicatedMergeTree('/p', '{replica}') ORDER BY d", distributed{}, false},
	} {
		got, ok := distributedOf(c.in)
		if ok != c.ok || got != c.want {
			t.Errorf("distributedOf(%s) = %+v, %v; want %+v, %v", c.in, got, ok, c.want, c.ok)
		}
	}
}
