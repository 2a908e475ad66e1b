package snowflake

import "testing"

func TestEstimateFromExplain(t *testing.T) {
	// The shape of EXPLAIN USING JSON output in Snowflake's documentation.
	plan := `{"GlobalStats":{"partitionsTotal":120,"partitionsAssigned":12,"bytesAssigned":104857600},
	  "Operations":[[{"id":0,"operation":"Result","expressions":["ORDERS.ORDER_DATE"]},
	                 {"id":1,"parent":0,"operation":"TableScan","objects":["DB.RAW.ORDERS"],"partitionsAssigned":12,"partitionsTotal":120,"bytesAssigned":104857600}]]}`
	e, err := estimateFrom(plan)
	if err != nil || e.Bytes != 104857600 || e.Rows != -1 || e.Note != "Snowflake EXPLAIN: 12 of 120 micro-partitions" {
		t.Errorf("estimate = %+v, %v", e, err)
	}
	if _, err := estimateFrom("not json"); err == nil {
		t.Error("a broken plan parsed")
	}
	if got := estimateSQL("SELECT 1"); got != "EXPLAIN USING JSON\nSELECT 1" {
		t.Errorf("estimateSQL = %q", got)
	}
}
