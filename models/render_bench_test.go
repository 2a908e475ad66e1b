package models

import (
	"testing"
)

// BenchmarkRender renders and fingerprints one daily partition of a
// typical model, as planning does for every partition the ledger records.
func BenchmarkRender(b *testing.B) {
	p := mustLoad(b, map[string]string{"models/marts/daily_revenue.sql": dailyRevenue})
	m := mustModel(b, p, "marts.daily_revenue")
	s := &Scope{Dialect: ansi{}, Schema: "main", Vars: p.Vars}
	parts := m.Partitions(date("2024-01-01"), date("2033-12-31"))
	b.ResetTimer()
	i := 0
	for b.Loop() {
		sql, err := m.Render(s, parts[i%len(parts)])
		if err != nil {
			b.Fatal(err)
		}
		_ = sql
		i++
	}
}

// BenchmarkLoad parses and compiles a project of 200 models.
func BenchmarkLoad(b *testing.B) {
	files := map[string]string{}
	for i := 0; i < 200; i++ {
		files["models/m"+string(rune('a'+i%26))+itoa(i)+".sql"] = dailyRevenue
	}
	for b.Loop() {
		if _, err := load(b, files); err != nil {
			b.Fatal(err)
		}
	}
}

func itoa(i int) string {
	const digits = "0123456789"
	if i < 10 {
		return digits[i : i+1]
	}
	return itoa(i/10) + digits[i%10:i%10+1]
}
