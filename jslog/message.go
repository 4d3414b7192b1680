package jslog

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"

	"backupmon/wal"
)

// A message of a shard's stream is a batch of records:
//
//	magic "BML1" | epoch uvarint | prevSeq uvarint | count uvarint |
//	count × (type byte | length uvarint | payload) | CRC32C of all before, 4 bytes LE
//
// epoch is the writer's (its lease's revision); prevSeq is the sequence of
// the message before it, so that replay finds a gap; the CRC finds a message
// damaged in the stream's files. A message with no records is a writer's
// takeover marker.

const magic = "BML1"

// maxRecords is the most records one message holds: a record's position
// (LSN) is its message's sequence times maxRecords plus its index.
const maxRecords = 1 << 10

var crcTable = crc32.MakeTable(crc32.Castagnoli)

// lsnOf returns the position of record i of message seq.
func lsnOf(seq, i uint64) uint64 { return seq<<10 | i }

// seqOf returns the sequence of the message holding position lsn.
func seqOf(lsn uint64) uint64 { return lsn >> 10 }

// message builds one message.
type message struct {
	head    []byte
	body    []byte
	records int
}

func newMessage(epoch, prevSeq uint64) *message {
	m := &message{head: append(make([]byte, 0, 32), magic...)}
	m.head = binary.AppendUvarint(m.head, epoch)
	m.head = binary.AppendUvarint(m.head, prevSeq)
	return m
}

// addRequest adds the record of r (nothing for a barrier).
func (m *message) addRequest(r wal.Request) {
	if r.Rec != nil {
		m.add(r.Rec)
	}
}

// add appends one record.
func (m *message) add(rec wal.Record) {
	m.body = append(m.body, rec.Type())
	at := len(m.body)
	m.body = append(m.body, make([]byte, binary.MaxVarintLen32)...)
	start := len(m.body)
	m.body = rec.AppendPayload(m.body)
	// Move the payload back over the unused length bytes.
	n := binary.PutUvarint(m.body[at:], uint64(len(m.body)-start))
	copy(m.body[at+n:], m.body[start:])
	m.body = m.body[:at+n+len(m.body)-start]
	m.records++
}

// size returns the bytes the message holds so far.
func (m *message) size() int { return len(m.head) + len(m.body) + 8 }

// finish returns the message's bytes.
func (m *message) finish() []byte {
	out := make([]byte, 0, m.size())
	out = append(out, m.head...)
	out = binary.AppendUvarint(out, uint64(m.records))
	out = append(out, m.body...)
	return binary.LittleEndian.AppendUint32(out, crc32.Checksum(out, crcTable))
}

// encodeMessage returns a whole message of recs.
func encodeMessage(_ []byte, epoch, prevSeq uint64, recs []wal.Record) []byte {
	m := newMessage(epoch, prevSeq)
	for _, r := range recs {
		m.add(r)
	}
	return m.finish()
}

// decoded is a message read back.
type decoded struct {
	epoch, prevSeq uint64
	records        []rawRecord
}

type rawRecord struct {
	typ     byte
	payload []byte
}

var errMessage = errors.New("not a log message")

// decodeMessage reads a message, checking its checksum. The payloads
// point into data.
func decodeMessage(data []byte) (decoded, error) {
	var d decoded
	if len(data) < len(magic)+4 || string(data[:len(magic)]) != magic {
		return d, errMessage
	}
	body, sum := data[:len(data)-4], binary.LittleEndian.Uint32(data[len(data)-4:])
	if crc32.Checksum(body, crcTable) != sum {
		return d, fmt.Errorf("%w: checksum mismatch", errMessage)
	}
	p := body[len(magic):]
	var n int
	var count uint64
	if d.epoch, n = binary.Uvarint(p); n <= 0 {
		return d, errMessage
	}
	p = p[n:]
	if d.prevSeq, n = binary.Uvarint(p); n <= 0 {
		return d, errMessage
	}
	p = p[n:]
	if count, n = binary.Uvarint(p); n <= 0 || count > maxRecords {
		return d, errMessage
	}
	p = p[n:]
	for range count {
		if len(p) < 1 {
			return d, errMessage
		}
		typ := p[0]
		size, n := binary.Uvarint(p[1:])
		if n <= 0 || size > uint64(len(p)-1-n) {
			return d, errMessage
		}
		d.records = append(d.records, rawRecord{typ: typ, payload: p[1+n : 1+n+int(size)]})
		p = p[1+n+int(size):]
	}
	if len(p) != 0 {
		return d, fmt.Errorf("%w: %d bytes after the records", errMessage, len(p))
	}
	return d, nil
}
