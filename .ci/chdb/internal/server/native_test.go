package server

import (
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ClickHouse/ch-go/proto"
	"github.com/google/uuid"
)

// chdbOutputs are FORMAT Native outputs of chDB 26.5.1, recorded with
// chdb-purego.
var chdbOutputs = []struct{ query, hex string }{
	{"SELECT [toLowCardinality('a')] AS x, CAST([] AS Array(LowCardinality(String))) AS y, NULL AS n, map('a', 1) AS m, " +
		"(1, 'x') AS tup, toDecimal64(1.5, 2) AS d, [[1],[2,3]] AS aa", "070101781d4172726179284c6f7743617264696e616c69747928537472696e672929010000000000000001000000000000000006" +
		"000000000000020000000000000000016101000000000000000101791d4172726179284c6f7743617264696e616c69747928537472696e6729" +
		"2901000000000000000000000000000000016e114e756c6c61626c65284e6f7468696e67290130016d124d617028537472696e672c2055496e" +
		"743829010000000000000001610103747570145475706c652855496e74382c20537472696e672901017801640e446563696d616c2831382c20" +
		"322996000000000000000261611341727261792841727261792855496e74382929020000000000000001000000000000000300000000000000" +
		"010203"},
	{"SELECT toLowCardinality(toNullable(toString(number % 3))) AS lc, number AS n, toNullable(toString(number)) AS s, " +
		"CAST(tuple(number, 'x') AS Tuple(a UInt64, `b c` String)) AS t, toDateTime64(number, 3, 'UTC') AS dt, " +
		"CAST('a(' AS Enum8('a(' = 1, 'b,' = 2)) AS e, toFixedString('ab', 3) AS fs, " +
		"toUUID('61f0c404-5cb3-11e7-907b-a6006ad3dba0') AS u FROM numbers(3)", "0803026c63204c6f7743617264696e616c697479284e756c6c61626c6528537472696e67292901000000000000000006000000000000" +
		"050000000000000000000130013101320300000000000000020304016e0655496e74363400000000000000000100000000000000020000000000" +
		"00000173104e756c6c61626c6528537472696e672900000001300131013201741d5475706c6528612055496e7436342c20606220636020537472" +
		"696e6729000000000000000001000000000000000200000000000000017801780178026474144461746554696d65363428332c20275554432729" +
		"0000000000000000e803000000000000d007000000000000016519456e756d382827612827203d20312c2027622c27203d2032290101010266" +
		"730e4669786564537472696e6728332961620061620061620001750455554944e711b35c04c4f061a0dbd36a00a67b90e711b35c04c4f061a0db" +
		"d36a00a67b90e711b35c04c4f061a0dbd36a00a67b90"},
}

// nativeBody serializes blocks back into the Native format.
func nativeBody(blocks []block) []byte {
	var b proto.Buffer
	for _, blk := range blocks {
		b.PutUVarInt(uint64(len(blk.Columns)))
		b.PutUVarInt(uint64(blk.Rows))
		for _, c := range blk.Columns {
			b.PutString(c.Name)
			b.PutString(c.Type)
			b.PutRaw(c.Data)
		}
	}
	return b.Buf
}

// TestReadChDBOutput splits recorded chDB output into blocks and columns:
// put back together, they are the output again.
func TestReadChDBOutput(t *testing.T) {
	for _, out := range chdbOutputs {
		query := out.query
		data, err := hex.DecodeString(out.hex)
		if err != nil {
			t.Fatal(err)
		}
		blocks, err := readNativeBlocks(data)
		if err != nil {
			t.Fatalf("%s: %v", query, err)
		}
		if !bytes.Equal(nativeBody(blocks), data) {
			t.Errorf("%s: the blocks read do not make up the output", query)
		}
		var cols []string
		for _, c := range blocks[0].Columns {
			cols = append(cols, c.Name+" "+c.Type)
		}
		t.Logf("%d rows of %s", blocks[0].Rows, strings.Join(cols, ", "))
	}
}

// TestReadColumnsEncodedByChGo checks the walker against ch-go's encoders:
// each column read from a block is the bytes ch-go writes for it.
func TestReadColumnsEncodedByChGo(t *testing.T) {
	strs := func(v ...string) *proto.ColStr {
		c := &proto.ColStr{}
		c.AppendArr(v)
		return c
	}
	arr := proto.NewArray[string](&proto.ColStr{})
	arr.AppendArr([][]string{{"a", "b"}, {}, {"c"}})
	lcArr := proto.NewArray[string](proto.NewLowCardinality[string](&proto.ColStr{}))
	lcArr.AppendArr([][]string{{}, {"x", "y", "x"}, {}})
	emptyLC := proto.NewArray[string](proto.NewLowCardinality[string](&proto.ColStr{}))
	emptyLC.AppendArr([][]string{{}, {}, {}})
	nullable := proto.NewColNullable[string](&proto.ColStr{})
	nullable.AppendArr([]proto.Nullable[string]{proto.NewNullable("a"), proto.Null[string](), proto.NewNullable("")})
	lc := proto.NewLowCardinality[string](&proto.ColStr{})
	lc.AppendArr([]string{"eu", "us", "eu"})
	m := proto.NewMap[string, uint64](&proto.ColStr{}, &proto.ColUInt64{})
	m.AppendArr([]map[string]uint64{{"a": 1}, {}, {"b": 2, "c": 3}})
	dates := &proto.ColDate{}
	datetimes := &proto.ColDateTime{}
	for i := range 3 {
		dates.Append(time.Date(2024, 1, 1+i, 0, 0, 0, 0, time.UTC))
		datetimes.Append(time.Date(2024, 1, 1, i, 0, 0, 0, time.UTC))
	}
	uuids := &proto.ColUUID{}
	uuids.AppendArr([]uuid.UUID{uuid.New(), uuid.New(), uuid.New()})
	fixed := &proto.ColFixedStr{Size: 3}
	fixed.AppendArr([][]byte{[]byte("abc"), []byte("def"), []byte("ghi")})
	cols := []proto.InputColumn{
		{Name: "u64", Data: &proto.ColUInt64{1, 2, 3}},
		{Name: "s", Data: strs("one", "", "three")},
		{Name: "arr", Data: arr},
		{Name: "lc_arr", Data: lcArr},
		{Name: "empty_lc_arr", Data: emptyLC},
		{Name: "nullable", Data: nullable},
		{Name: "lc", Data: lc},
		{Name: "map", Data: m},
		{Name: "date", Data: dates},
		{Name: "datetime", Data: datetimes},
		{Name: "uuid", Data: uuids},
		{Name: "fixed", Data: fixed},
		{Name: "dec", Data: &proto.ColDecimal64{1, 2, 3}},
	}
	var b proto.Buffer
	if err := (proto.Block{Columns: len(cols), Rows: 3}).EncodeRawBlock(&b, 0, cols); err != nil {
		t.Fatal(err)
	}
	blocks, err := readNativeBlocks(b.Buf)
	if err != nil {
		t.Fatal(err)
	}
	if len(blocks) != 1 || blocks[0].Rows != 3 || len(blocks[0].Columns) != len(cols) {
		t.Fatalf("read %+v", blocks)
	}
	for i, c := range blocks[0].Columns {
		var want proto.Buffer
		if s, ok := cols[i].Data.(proto.StateEncoder); ok {
			s.EncodeState(&want)
		}
		cols[i].Data.EncodeColumn(&want)
		if c.Name != cols[i].Name || c.Type != string(cols[i].Data.Type()) || !bytes.Equal(c.Data, want.Buf) {
			t.Errorf("column %d: read %s %s (%d bytes), want %s %s (%d bytes)", i, c.Name, c.Type, len(c.Data),
				cols[i].Name, cols[i].Data.Type(), len(want.Buf))
		}
	}
}

// TestEncodeBlockForTheProtocol encodes a block for a Data packet and
// reads it back with ch-go at the server's revision.
func TestEncodeBlockForTheProtocol(t *testing.T) {
	in := &proto.ColStr{}
	in.AppendArr([]string{"a", "bc"})
	var native proto.Buffer
	if err := (proto.Block{Columns: 1, Rows: 2}).EncodeRawBlock(&native, 0, []proto.InputColumn{{Name: "s", Data: in}}); err != nil {
		t.Fatal(err)
	}
	blocks, err := readNativeBlocks(native.Buf)
	if err != nil {
		t.Fatal(err)
	}
	for _, revision := range []int{minRevision, Revision} {
		var b proto.Buffer
		encodeBlock(&b, revision, blocks[0])
		var got proto.ColStr
		var blk proto.Block
		if err := blk.DecodeBlock(b.Reader(), revision, proto.Results{{Name: "s", Data: &got}}); err != nil {
			t.Fatalf("revision %d: %v", revision, err)
		}
		if blk.Rows != 2 || got.Row(0) != "a" || got.Row(1) != "bc" {
			t.Errorf("revision %d: %d rows, %q %q", revision, blk.Rows, got.Row(0), got.Row(1))
		}
	}
}

func TestUnsupportedTypes(t *testing.T) {
	for _, typ := range []string{"Dynamic", "JSON", "Variant(String, UInt64)", "AggregateFunction(sum, UInt64)", "Array(Dynamic)"} {
		err := skipColumn(&sliceReader{b: make([]byte, 64)}, typ, 1)
		if !errors.Is(err, errUnsupportedType) {
			t.Errorf("%s: %v", typ, err)
		}
	}
}

func TestTruncatedBlock(t *testing.T) {
	data, _ := hex.DecodeString(chdbOutputs[1].hex)
	for _, n := range []int{1, len(data) / 2, len(data) - 1} {
		if _, err := readNativeBlocks(data[:n]); err == nil {
			t.Errorf("%d of %d bytes read without error", n, len(data))
		}
	}
}

func TestParseType(t *testing.T) {
	for in, want := range map[string]string{
		"Tuple(a UInt64, `b c` Nullable(String))":         "Tuple[UInt64 Nullable[String]]",
		"Map(String, Array(LowCardinality(String)))":      "Map[String Array[LowCardinality[String]]]",
		"Enum8('a(' = 1, 'b,' = 2)":                       "Enum8",
		"DateTime64(3, 'UTC')":                            "DateTime64",
		"SimpleAggregateFunction(anyLast, Decimal(9, 2))": "SimpleAggregateFunction[Decimal]",
	} {
		typ, err := parseType(in)
		if err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		if got := typeString(typ); got != want {
			t.Errorf("%s parsed as %s, want %s", in, got, want)
		}
	}
}

func typeString(t dataType) string {
	if len(t.args) == 0 {
		return t.name
	}
	var args []string
	for _, a := range t.args {
		args = append(args, typeString(a))
	}
	return fmt.Sprintf("%s%v", t.name, args)
}
