package models

import "testing"

func TestNormalizeSQL(t *testing.T) {
	t.Parallel()
	base := normalizeSQL("SELECT a, sum(b) AS s FROM {{ ref(\"x\") }} WHERE d >= {{ start }} AND c = 'a  b' GROUP BY a")
	for _, same := range []string{
		"SELECT a,\n       sum(b) AS s -- the total\nFROM {{ref(\"x\")}}\nWHERE d>={{ start }}\n  AND c = 'a  b'\nGROUP BY a\n",
		"/* reflowed */ SELECT a , sum( b ) AS s FROM {{  ref( \"x\" )  }} WHERE d >= {{start}} AND c='a  b' GROUP BY a;",
	} {
		if got := normalizeSQL(same); got != base {
			t.Errorf("reformatted text normalizes differently:\n got %q\nwant %q", got, base)
		}
	}
	for _, different := range []string{
		"SELECT a, sum(b) AS s FROM {{ ref(\"x\") }} WHERE d >= {{ start }} AND c = 'a b' GROUP BY a",       // a literal
		"SELECT a, sum(b) AS s FROM {{ ref(\"y\") }} WHERE d >= {{ start }} AND c = 'a  b' GROUP BY a",      // a ref
		"SELECT a, sum(b) AS s FROM {{ ref(\"x\") }} WHERE d > {{ start }} AND c = 'a  b' GROUP BY a",       // an operator
		"SELECT a, sum(b) AS t FROM {{ ref(\"x\") }} WHERE d >= {{ start }} AND c = 'a  b' GROUP BY a",      // a name
		"SELECT a, sum(b) AS s FROM {{ ref(\"x\") }} WHERE d >= {{ end }} AND c = 'a  b' GROUP BY a",        // an expression
		"SELECT a, sum(\"b \") AS s FROM {{ ref(\"x\") }} WHERE d >= {{ start }} AND c = 'a  b' GROUP BY a", // a quoted name
	} {
		if normalizeSQL(different) == base {
			t.Errorf("a real change normalizes away: %q", different)
		}
	}
	// Joining tokens never makes a comment out of two operators.
	if got := normalizeSQL("a - -1 / *x*/"); got == normalizeSQL("a --1") {
		t.Errorf("%q", got)
	}
	if got := normalizeSQL("x -- a comment with 'quotes\ny"); got != "x y" {
		t.Errorf("comment: %q", got)
	}
	if got := normalizeSQL("SELECT '--not a comment' , $$ /* nor */ $$"); got != "SELECT '--not a comment',$$ /* nor */ $$" {
		t.Errorf("strings: %q", got)
	}
}
