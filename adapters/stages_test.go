package adapters

import (
	"strings"
	"testing"

	"github.com/refill/refill/models"
)

func TestStageNames(t *testing.T) {
	t.Parallel()
	target := models.Relation{Schema: "marts", Name: "daily"}
	const run = "20240105T101500Z-1a2b3c"
	name := StageName(target, KindStage, run, "ab12cd7")
	if name != "marts__daily__s_20240105t101500z1a2b3c_ab12cd7" {
		t.Errorf("StageName = %s", name)
	}
	for _, n := range []string{name, strings.ToUpper(name), StageName(models.Relation{Schema: "m", Name: "t__x"}, KindOverlay, run, "1")} {
		if token, ok := StageRun(n); !ok || token != RunToken(run) {
			t.Errorf("StageRun(%s) = %q, %v; want %q", n, token, ok, RunToken(run))
		}
	}
	for _, n := range []string{
		"marts__daily",                            // no kind, run and unique part
		"marts__daily__ab12cd_3",                  // an older refill's stage: no run
		StageName(target, KindStage, "test", "1"), // a run ID refill does not make
		"marts__daily__s_20240105t101500z1a2b3c",  // no unique part
		"marts__daily__seed_seed_ab12cd1",         // a seed load
	} {
		if token, ok := StageRun(n); ok {
			t.Errorf("StageRun(%s) = %q, true; want false", n, token)
		}
	}
	for n, want := range map[string]string{
		name:                  KindStage,
		strings.ToUpper(name): KindStage,
		StageName(models.Relation{Schema: "m", Name: "t__x"}, KindOverlay, run, "1"): KindOverlay,
		"marts__daily": "",
		"daily":        "",
	} {
		if got := StageKind(n); got != want {
			t.Errorf("StageKind(%s) = %q, want %q", n, got, want)
		}
		if IsStage(n) != (want == KindStage) {
			t.Errorf("IsStage(%s) = %v", n, !(want == KindStage))
		}
	}
}
