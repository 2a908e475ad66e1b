package main

import (
	"bytes"
	"fmt"
	"html/template"
	"os"
	"path/filepath"
	"time"

	"github.com/refill/refill/runner"
)

var statusPage = template.Must(template.New("status").Parse(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>refill status: {{.Target}}</title>
<style>
  body { font: 14px/1.4 system-ui, sans-serif; margin: 2em; color: #222; }
  h1 { font-size: 1.4em; } h2 { font-size: 1.1em; margin-top: 2em; }
  .strip { display: flex; flex-wrap: wrap; gap: 2px; margin: .5em 0; }
  .cell { width: 12px; height: 18px; border-radius: 2px; }
  .done { background: #2e9e44; } .stale { background: #e6a800; }
  .missing { background: #c9c9c9; } .failed { background: #d0312d; }
  .legend span { display: inline-block; margin-right: 1em; }
  .legend .cell { display: inline-block; vertical-align: middle; margin-right: .3em; }
  table { border-collapse: collapse; margin-top: .5em; }
  td, th { padding: 2px 10px; border-bottom: 1px solid #eee; text-align: left; vertical-align: top; }
  td.num { text-align: right; font-variant-numeric: tabular-nums; }
  td.err { color: #d0312d; white-space: pre-wrap; font-family: monospace; font-size: 12px; }
  details summary { cursor: pointer; color: #555; }
</style>
</head>
<body>
<h1>refill status: target {{.Target}} ({{.Adapter}})</h1>
<p>At {{.Now}}. Each square is one partition; hover for its key and state.</p>
<p class="legend"><span><i class="cell done"></i>done</span><span><i class="cell stale"></i>stale</span><span><i class="cell missing"></i>missing</span><span><i class="cell failed"></i>failed</span></p>
{{range .Models}}
<h2 id="{{.Name}}">{{.Name}}</h2>
<p>{{.Label}}: {{.Done}} done, {{.Stale}} stale, {{.Missing}} missing, {{.Failed}} failed.</p>
<div class="strip">{{range .Partitions}}<i class="cell {{.State}}" title="{{.Key}}: {{.State}}{{if .Detail}} ({{.Detail}}){{end}}"></i>{{end}}</div>
<details><summary>Partitions</summary>
<table>
<tr><th>Partition</th><th>State</th><th>Rows</th><th>Run</th><th>Finished</th><th>Duration</th><th>Error or detail</th></tr>
{{range .Partitions}}<tr><td>{{.Key}}</td><td>{{.State}}</td><td class="num">{{.Rows}}</td><td>{{.RunID}}</td><td>{{.Finished}}</td><td class="num">{{.Duration}}</td><td class="err">{{.Detail}}</td></tr>
{{end}}</table>
</details>
{{end}}
</body>
</html>
`))

type htmlPartition struct {
	Key, State, Rows, RunID, Finished, Duration, Detail string
}

type htmlModel struct {
	Name, Label                  string
	Done, Stale, Missing, Failed int
	Partitions                   []htmlPartition
}

// writeStatusHTML writes the status picture and per-partition details as a
// standalone page.
func writeStatusHTML(path string, s *session, st []runner.ModelStatus, now time.Time) error {
	data := struct {
		Target, Adapter, Now string
		Models               []htmlModel
	}{Target: s.target.Name, Adapter: s.info.Name, Now: now.UTC().Format("2006-01-02 15:04 UTC")}
	for _, ms := range st {
		hm := htmlModel{Name: ms.Model.Name, Label: partitionsLabel(ms), Done: ms.Counts[runner.StateDone],
			Stale: ms.Counts[runner.StateStale], Missing: ms.Counts[runner.StateMissing], Failed: ms.Counts[runner.StateFailed]}
		for _, ps := range ms.Partitions {
			hp := htmlPartition{Key: ps.Partition.Key, State: string(ps.State), Detail: s.app.redact(ps.Detail)}
			if r := ps.Record; r != nil {
				hp.Rows, hp.RunID = fmt.Sprint(r.Rows), r.RunID
				hp.Finished = r.FinishedAt.UTC().Format("2006-01-02 15:04:05")
				hp.Duration = r.FinishedAt.Sub(r.StartedAt).Round(time.Millisecond).String()
				if r.Error != "" {
					hp.Detail = s.app.redact(r.Error)
				}
			}
			hm.Partitions = append(hm.Partitions, hp)
		}
		data.Models = append(data.Models, hm)
	}
	var buf bytes.Buffer
	if err := statusPage.Execute(&buf, data); err != nil {
		return err
	}
	tmp := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".tmp")
	if err := os.WriteFile(tmp, buf.Bytes(), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
