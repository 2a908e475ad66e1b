package snowflake

import (
	"github.com/refill/refill/models"
)

// BlockName is the key of a model's block of Snowflake settings:
//
//	snowflake: {warehouse: ..., cluster_by: ...}
const BlockName = "snowflake"

var _ models.BlockFunc = checkBlock

// ModelOptions are the settings of a model's snowflake: block.
type ModelOptions struct {
	Warehouse string // run the model's statements on this virtual warehouse
	ClusterBy string // CLUSTER BY expression of the table refill creates
}

// parseBlock decodes a model's snowflake: block (o is nil when the model
// has none). Its errors name the offending line.
func parseBlock(o *models.Options) (ModelOptions, error) {
	s, err := o.Strings("warehouse", "cluster_by")
	return ModelOptions{Warehouse: s["warehouse"], ClusterBy: s["cluster_by"]}, err
}

// checkBlock is the models.BlockFunc of the snowflake: block. Only
// cluster_by shapes the table, so only it is in the model's version: the
// warehouse says where the model runs, not what it computes.
func checkBlock(o *models.Options) (version string, err error) {
	opts, err := parseBlock(o)
	if opts.ClusterBy == "" {
		return "", err
	}
	return "snowflake.cluster_by: " + opts.ClusterBy + "\n", err
}

// modelOptions returns the settings of m's snowflake: block (none when m
// is nil). Loading the project refused a block with errors (checkBlock),
// so none is left to report here.
func modelOptions(m *models.Model) ModelOptions {
	if m == nil {
		return ModelOptions{}
	}
	opts, _ := parseBlock(m.Config.Adapter[BlockName])
	return opts
}
