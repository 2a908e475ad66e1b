package clickhouse

import (
	"fmt"

	"github.com/refill/refill/models"
)

// BlockName is the key of a model's block of ClickHouse settings:
//
//	clickhouse: {engine: ..., order_by: ..., partition_by: ..., settings: ...}
const BlockName = "clickhouse"

var _ models.BlockFunc = checkBlock

// parseBlock decodes a model's clickhouse: block (o is nil when the model
// has none) into the table options it sets; those it leaves out are "",
// for modelTableOptions to default. Its errors name the offending line.
func parseBlock(o *models.Options) (TableOptions, error) {
	s, err := o.Strings("engine", "order_by", "partition_by", "settings", "sharding_key")
	return TableOptions{Engine: s["engine"], OrderBy: s["order_by"], PartitionBy: s["partition_by"], Settings: s["settings"],
		ShardingKey: s["sharding_key"]}, err
}

// checkBlock is the models.BlockFunc of the clickhouse: block. Every
// setting but sharding_key shapes the table refill creates, so they are in
// the model's version; sharding_key says only on which shard a row lives
// (and applies when refill creates the table).
func checkBlock(o *models.Options) (version string, err error) {
	t, err := parseBlock(o)
	t.ShardingKey = ""
	if t == (TableOptions{}) {
		return "", err
	}
	// The line every version has had since the block was read (Go's %+v of
	// these options): another text would make every model with a block
	// look edited.
	return fmt.Sprintf("clickhouse: {Engine:%s OrderBy:%s PartitionBy:%s Settings:%s}\n", t.Engine, t.OrderBy, t.PartitionBy, t.Settings), err
}

// blockOf returns m's clickhouse: block (nil when m is nil or has none).
func blockOf(m *models.Model) *models.Options {
	if m == nil {
		return nil
	}
	return m.Config.Adapter[BlockName]
}
