package server

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/ClickHouse/ch-go/proto"
)

// This file reads blocks in ClickHouse's Native format, as chDB writes them
// (FORMAT Native, i.e. protocol revision 0: no block info, no serialization
// kinds) and as clients send them in Data packets. The server has to walk
// every column's data to find where the next column starts, because a
// block of the native protocol differs from a Native-format block: it has
// block info first and, from revision 54454, a custom-serialization flag
// after each column's type.

// byteSource is what blocks are read from: a *proto.Reader on the wire, or
// a sliceReader over chDB's output. Integers are little-endian.
type byteSource interface {
	UVarInt() (uint64, error)
	UInt64() (uint64, error)
	ReadRaw(n int) ([]byte, error)
}

// maxBlockBytes bounds one length read from a block (a string, a column),
// so that a corrupt length is an error and not an allocation of exabytes.
const maxBlockBytes = 1 << 32

// column is one column of a block: its data is in the Native format.
type column struct {
	Name, Type string
	Data       []byte
}

// block is one block of a result or of a client's Data packet.
type block struct {
	Rows    int
	Columns []column
}

// sliceReader reads a byte slice as a byteSource and tells its offset.
type sliceReader struct {
	b   []byte
	off int
}

func (r *sliceReader) UVarInt() (uint64, error) {
	v, n := binary.Uvarint(r.b[r.off:])
	if n <= 0 {
		return 0, errors.New("truncated or invalid varint")
	}
	r.off += n
	return v, nil
}

func (r *sliceReader) UInt64() (uint64, error) {
	b, err := r.ReadRaw(8)
	if err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint64(b), nil
}

func (r *sliceReader) ReadRaw(n int) ([]byte, error) {
	if n < 0 || n > len(r.b)-r.off {
		return nil, fmt.Errorf("block truncated: %d bytes wanted at offset %d of %d", n, r.off, len(r.b))
	}
	r.off += n
	return r.b[r.off-n : r.off], nil
}

func (r *sliceReader) done() bool { return r.off >= len(r.b) }

// readString reads a length-prefixed string.
func readString(r byteSource) (string, error) {
	n, err := r.UVarInt()
	if err != nil {
		return "", err
	}
	if n > maxBlockBytes {
		return "", fmt.Errorf("string of %d bytes", n)
	}
	b, err := r.ReadRaw(int(n))
	return string(b), err
}

// readNativeBlocks splits chDB's Native output into blocks.
func readNativeBlocks(data []byte) ([]block, error) {
	r := &sliceReader{b: data}
	var out []block
	for !r.done() {
		b, err := readBlockBody(r, 0, func(t string, rows int) ([]byte, error) {
			start := r.off
			if err := skipColumn(r, t, rows); err != nil {
				return nil, err
			}
			return data[start:r.off], nil
		})
		if err != nil {
			return nil, fmt.Errorf("reading chDB's Native output: %w", err)
		}
		out = append(out, b)
	}
	return out, nil
}

// readBlockBody reads a block's column count, row count and columns, each
// column's data by data(type, rows). Columns of a block with rows carry a
// custom-serialization flag from revision 54454 on, which must be 0.
func readBlockBody(r byteSource, revision int, data func(typ string, rows int) ([]byte, error)) (block, error) {
	cols, err := r.UVarInt()
	if err != nil {
		return block{}, fmt.Errorf("column count: %w", err)
	}
	rows, err := r.UVarInt()
	if err != nil {
		return block{}, fmt.Errorf("row count: %w", err)
	}
	if cols > 1<<20 || rows > 1<<40 {
		return block{}, fmt.Errorf("implausible block of %d columns and %d rows", cols, rows)
	}
	b := block{Rows: int(rows), Columns: make([]column, cols)}
	for i := range b.Columns {
		c := &b.Columns[i]
		if c.Name, err = readString(r); err != nil {
			return block{}, fmt.Errorf("name of column %d: %w", i, err)
		}
		if c.Type, err = readString(r); err != nil {
			return block{}, fmt.Errorf("type of column %s: %w", c.Name, err)
		}
		if proto.FeatureCustomSerialization.In(revision) {
			custom, err := r.ReadRaw(1)
			if err != nil {
				return block{}, fmt.Errorf("serialization of column %s: %w", c.Name, err)
			}
			if custom[0] != 0 {
				return block{}, fmt.Errorf("column %s has a custom serialization, which the server does not read", c.Name)
			}
		}
		if rows > 0 {
			if c.Data, err = data(c.Type, b.Rows); err != nil {
				return block{}, fmt.Errorf("column %s %s: %w", c.Name, c.Type, err)
			}
		}
	}
	return b, nil
}

// readNamesAndTypes reads the header of RowBinaryWithNamesAndTypes output
// (the column count, the names, the types) as a block without rows.
func readNamesAndTypes(data []byte) (block, error) {
	r := &sliceReader{b: data}
	n, err := r.UVarInt()
	if err != nil || n > 1<<20 {
		return block{}, fmt.Errorf("reading a result header: column count %d: %v", n, err)
	}
	b := block{Columns: make([]column, n)}
	for i := range b.Columns {
		if b.Columns[i].Name, err = readString(r); err != nil {
			return block{}, fmt.Errorf("reading a result header: %w", err)
		}
	}
	for i := range b.Columns {
		if b.Columns[i].Type, err = readString(r); err != nil {
			return block{}, fmt.Errorf("reading a result header: %w", err)
		}
	}
	return b, nil
}

// encodeBlock appends a Data packet's block: block info, then the columns
// with the custom-serialization flag the revision implies.
func encodeBlock(buf *proto.Buffer, revision int, b block) {
	proto.BlockInfo{BucketNum: -1}.Encode(buf)
	buf.PutUVarInt(uint64(len(b.Columns)))
	buf.PutUVarInt(uint64(b.Rows))
	for _, c := range b.Columns {
		buf.PutString(c.Name)
		buf.PutString(c.Type)
		if proto.FeatureCustomSerialization.In(revision) {
			buf.PutBool(false)
		}
		if b.Rows > 0 {
			buf.PutRaw(c.Data)
		}
	}
}
