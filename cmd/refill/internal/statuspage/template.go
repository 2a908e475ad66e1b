package statuspage

import "html/template"

// statusPage is the page Render fills from a pageView. Cells
// carry their state as a class and nothing else, so a run of partitions in
// one state costs the same few bytes however long it is. A calendar's
// columns are all --w wide (a label wider than that overflows its column
// rather than widening it), so that a background repeating every --w plus
// the border spacing draws the gaps between the partitions of a run.
var statusPage = template.Must(template.New("status").Parse(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>refill status: {{.Target}}</title>
<style>
body{font:14px/1.45 system-ui,sans-serif;margin:1.5em 2em;color:#222}
h1{font-size:1.35em;margin:0 0 .2em}
h2{font-size:1.15em;margin:1.8em 0 .4em;border-bottom:1px solid #ddd;padding-bottom:.2em}
h3{font-size:1em;margin:1.2em 0 .3em}
.meta,.note,.desc,caption{color:#555}
.note{font-size:12px;margin:.2em 0}
a{color:#0b57d0;text-decoration:none}
a:hover{text-decoration:underline}
table{border-collapse:collapse}
.grid td,.grid th{padding:3px 10px;border-bottom:1px solid #eee;text-align:left;vertical-align:top}
.grid th{font-weight:600;background:#f6f6f6}
.num{text-align:right;font-variant-numeric:tabular-nums}
pre.msg{margin:0;white-space:pre-wrap;word-break:break-word;font:12px/1.4 ui-monospace,monospace;max-height:14em;overflow:auto}
pre.err{color:#8a1c1a}
.sw{display:inline-block;width:12px;height:12px;border-radius:2px;vertical-align:-1px;margin-right:.35em}
.tag,.chip{display:inline-block;padding:0 6px;border-radius:3px;color:#fff;font-size:12px}
.chip{padding:1px 8px;margin:2px}
.tag.missing,.tag.empty,.tag.blocked,.chip.missing,.chip.empty,.chip.blocked{color:#222}
.legend{position:sticky;top:0;z-index:1;background:#fff;display:flex;flex-wrap:wrap;gap:.2em 1.2em;padding:.4em 0;border-bottom:1px solid #eee;font-size:12px}
.done{background:#2e9e44}.empty{background:#a3d99b}.partial{background:#5ab4c5}.stale{background:#e6a800}
.drift{background:#8e44ad}.pending{background:#3f5fd8}.failed{background:#d0312d}.missing{background:#dadada}
.blocked{background:repeating-linear-gradient(135deg,#dadada 0 3px,#e0837f 3px 6px)}
.outside{background:repeating-linear-gradient(45deg,#dadada 0 3px,#9a7fd1 3px 6px)}
.cal{--w:14px;border-collapse:separate;border-spacing:2px;font-size:10px;margin:.3em 0}
.cal.wide{--w:30px}
.cal caption{text-align:left;font-size:12px}
.cal td{width:var(--w);min-width:var(--w);height:14px;padding:0;border-radius:2px}
.cal thead th{font-weight:400;color:#666;padding:0}
.cal thead b{display:block;width:var(--w);font-weight:400;text-align:center;white-space:nowrap}
.cal tbody th,.cal .corner{font-weight:400;text-align:right;padding-right:6px;white-space:nowrap;font-size:11px;font-variant-numeric:tabular-nums}
.cal td[colspan]{--gap:linear-gradient(90deg,transparent var(--w),#fff 0);background-image:var(--gap);background-size:calc(var(--w) + 2px) 100%}
.cal td.blocked[colspan]{background-image:var(--gap),repeating-linear-gradient(135deg,#dadada 0 3px,#e0837f 3px 6px);background-size:calc(var(--w) + 2px) 100%,auto}
.cal .fold td{padding:0 4px;white-space:nowrap;color:#fff;background-image:none}
.cal .fold td.blocked{background-image:repeating-linear-gradient(135deg,#dadada 0 3px,#e0837f 3px 6px)}
.cal .fold .missing,.cal .fold .empty,.cal .fold .blocked{color:#222}
.issues a{white-space:nowrap}
.model h3{margin:1.4em 0 .1em}
.model h3 .desc{font-weight:400;font-size:13px;margin-left:.5em}
.model p,.model details{margin:.15em 0}
td:target,.chip:target{outline:2px solid #111;outline-offset:1px}
</style>
</head>
<body>
<h1>refill status: target {{.Target}} ({{.Adapter}})</h1>
<p class="meta">As of {{.Now}}: {{.Partitions}} partition{{if ne .Partitions 1}}s{{end}} in {{len .Models}} model{{if ne (len .Models) 1}}s{{end}}.
{{- range .Totals}} <span><i class="sw {{.Class}}"></i>{{.N}} {{.Label}}</span>{{end}}</p>
{{- range .Notes}}
<p class="note">{{.}}</p>
{{- end}}

<h2 id="attention">Needs attention</h2>
{{- if not .Sections}}
<p>Nothing failed, is blocked, pending, drifted, stale or partial.</p>
{{- end}}
{{- range $sec := .Sections}}
<h3 id="{{.Class}}-summary"><i class="sw {{.Class}}"></i>{{.Title}}: {{.Partitions}} partition{{if ne .Partitions 1}}s{{end}}, {{len .Groups}} group{{if ne (len .Groups) 1}}s{{end}} {{.By}}</h3>
<table class="grid issues">
<tr><th>Partitions</th><th>{{if eq .Class "failed"}}Error{{else if eq .Class "blocked"}}Waits for{{else}}Reason{{end}}</th><th>Where (first partitions)</th></tr>
{{- range .Groups}}
<tr><td class="num">{{.Count}}</td><td><pre class="msg{{if eq $sec.Class "failed"}} err{{end}}">{{.Text}}</pre>
{{- if .Varies}}<p class="note">The text varies in dates or numbers from partition to partition; this is the first.</p>{{end}}
{{- if .Example}}<p class="note">For example: {{.Example}}</p>{{end}}</td><td>
{{- range .Where}}<div><a href="{{.Anchor}}">{{.Model}}</a>: {{range $i, $s := .Spans}}{{if $i}}, {{end}}<a href="{{$s.Href}}">{{$s.Label}}</a>{{end}}{{if .More}} and {{.More}} more{{end}}</div>{{end}}</td></tr>
{{- end}}
</table>
{{- if .MoreGroups}}
<p class="note">And {{.MoreGroups}} smaller groups: <code>refill status --list</code> lists every partition.</p>
{{- end}}
{{- end}}

{{- if .DiffAsked}}
<h2 id="changes">What the models' changes do to the data</h2>
{{- if not .Changes}}
<p>No model's version differs from the one its partitions were built by.</p>
{{- end}}
{{- range .Changes}}
<h3><a href="#{{.Model}}">{{.Model}}</a>: {{.Stale}} partition{{if ne .Stale 1}}s{{end}} built by an earlier version; {{.Diffed}} diffed</h3>
{{- if .Error}}<pre class="msg err">{{.Error}}</pre>{{end}}
{{- if .Diffed}}
<p>Rows in the partitions diffed, the table's against the current SQL's{{if .Key}} (matched by {{.Key}}){{else}} (compared whole){{end}}: {{.OnlyOld}} only old, {{.OnlyNew}} only new, {{.Changed}} changed, {{.Same}} the same.
{{- if .Added}} Columns added: {{.Added}}.{{end}}{{if .Dropped}} Columns dropped: {{.Dropped}}.{{end}}</p>
<table class="grid">
<tr><th>Partition</th><th>Old</th><th>New</th><th>Only old</th><th>Only new</th><th>Changed</th><th>Examples</th></tr>
{{- range .Partitions}}
<tr><td>{{.Key}}</td><td class="num">{{.Old}}</td><td class="num">{{.New}}</td><td class="num">{{.OnlyOld}}</td><td class="num">{{.OnlyNew}}</td><td class="num">{{.Changed}}</td><td>{{range .Examples}}<div><code>{{.}}</code></div>{{end}}</td></tr>
{{- end}}
</table>
{{- range .Sums}}<p class="note">{{.}}</p>{{end}}
{{- end}}
{{- end}}
{{- end}}

<h2 id="models">Models</h2>
<table class="grid overview">
<tr><th>Model</th><th>Partitions</th><th>Range</th>{{range .Columns}}<th><i class="sw {{.Class}}"></i>{{.Label}}</th>{{end}}</tr>
{{- range .Overview}}
<tr><td><a href="#{{.Name}}">{{.Name}}</a></td><td>{{.Label}}</td><td>{{.Range}}</td>{{range .Counts}}<td class="num">{{if .}}{{.}}{{end}}</td>{{end}}</tr>
{{- end}}
</table>
{{- if .Broken}}
<h3 id="broken">Broken models, left out</h3>
<table class="grid">
<tr><th>Model</th><th>File</th><th>Error</th></tr>
{{- range .Broken}}
<tr><td>{{.Name}}</td><td>{{.Path}}</td><td><pre class="msg err">{{.Error}}</pre></td></tr>
{{- end}}
</table>
<p class="note">Every command that does not name them goes on without them; <code>refill validate</code> lists every error.</p>
{{- end}}
{{- if .Orphans}}
<h3 id="orphans">In the ledger, no longer in the project</h3>
<table class="grid">
<tr><th>Model</th><th>Table</th><th>Partitions</th><th>Last run</th></tr>
{{- range .Orphans}}
<tr><td>{{.Name}}</td><td>{{.Table}}</td><td class="num">{{.Partitions}}</td><td>{{.LastRun}} ({{.Finished}})</td></tr>
{{- end}}
</table>
<p class="note">Their tables and records stay until <code>refill prune MODEL</code> drops them.</p>
{{- end}}

<h2 id="runs">Recent runs</h2>
{{- if .Runs}}
<table class="grid runs">
<tr><th>Run</th><th>Status</th><th>Started (UTC)</th><th>Took</th><th>Succeeded</th><th>Failed</th><th>Skipped</th><th>Host</th><th>Error</th></tr>
{{- range .Runs}}
<tr><td>{{.ID}}</td><td><span class="tag {{.Class}}">{{.Status}}</span></td><td>{{.Started}}</td><td class="num">{{.Took}}</td><td class="num">{{.Succeeded}}</td><td class="num">{{.Failed}}</td><td class="num">{{.Skipped}}</td><td>{{.Host}}</td><td>{{if .Error}}<pre class="msg err">{{.Error}}</pre>{{end}}</td></tr>
{{- end}}
</table>
{{- else}}
<p>No run is recorded.</p>
{{- end}}

<h2 id="calendars">Partitions</h2>
<div class="legend">{{range .Legend}}<span title="{{.Meaning}}"><i class="sw {{.Class}}"></i>{{.Label}}</span>{{end}}</div>
<p class="note">{{range $i, $l := .Legend}}{{if $i}}; {{end}}<b>{{$l.Label}}</b>: {{$l.Meaning}}{{end}}.</p>
{{- range .Models}}
<section class="model" id="{{.Name}}">
<h3>{{.Name}}{{if .Description}} <span class="desc">{{.Description}}</span>{{end}}</h3>
<p>{{.Label}}{{if .Calendar}}, {{.Range}}{{end}}:{{range .Counts}} <span><i class="sw {{.Class}}"></i>{{.N}} {{.Label}}</span>{{end}}</p>
{{- with .Calendar}}
<table class="cal{{if .Wide}} wide{{end}}">
<caption>Rows: {{.Corner}}. Columns: {{.Axis}}.</caption>
<thead><tr><th class="corner">{{.Corner}}</th>{{range .Columns}}<th><b>{{.}}</b></th>{{end}}</tr></thead>
<tbody>
{{- range .Rows}}
<tr{{if .Fold}} class="fold"{{end}}><th>{{.Label}}</th>{{range .Cells}}<td{{if .Class}} class="{{.Class}}"{{end}}{{if gt .Span 1}} colspan="{{.Span}}"{{end}}{{if .Title}} title="{{.Title}}"{{end}}{{if .ID}} id="{{.ID}}"{{end}}>{{.Text}}</td>{{end}}</tr>
{{- end}}
</tbody>
</table>
{{- end}}
{{- if .Chips}}
<p class="chips">{{range .Chips}}<span class="chip {{.Class}}" title="{{.Title}}"{{if .ID}} id="{{.ID}}"{{end}}>{{.Text}}</span>{{end}}</p>
{{- end}}
{{- if .Attention}}
<details><summary>{{.NeedAttention}} partition{{if eq .NeedAttention 1}} needs{{else}}s need{{end}} attention{{if .AttentionMore}} (the first {{len .Attention}} listed){{end}}</summary>
<table class="grid">
<tr><th>Partition</th><th>State</th><th>Rows</th><th>Run</th><th>Finished (UTC)</th><th>Took</th><th>Error or reason</th></tr>
{{- range .Attention}}
<tr><td>{{.Key}}</td><td><span class="tag {{.Class}}">{{.Class}}</span></td><td class="num">{{.Rows}}</td><td>{{.RunID}}</td><td>{{.Finished}}</td><td class="num">{{.Took}}</td><td>{{.Detail}}</td></tr>
{{- end}}
</table>
{{- if .AttentionMore}}
<p class="note">And {{.AttentionMore}} more: <code>refill status {{.Name}} --list</code>.</p>
{{- end}}
</details>
{{- end}}
</section>
{{- end}}
</body>
</html>
`))
