package state

import (
	"fmt"
	"reflect"
	"sync"

	"backupmon/codec"
)

// Header starts every record: the workspace it belongs to (zero for records
// of the whole engine) and the workspace's record sequence number, which lets
// replay skip records a snapshot already holds.
type Header struct {
	Workspace ID
	Seq       uint64

	rec Record // the record the header starts, and its type: set by Bind
	typ byte
}

// Head returns the record's header.
func (h *Header) Head() *Header { return h }

// Type returns the record's type number: 0 until the record is bound
// (Bind; Apply, NewWorkspace and Decode bind theirs).
func (h *Header) Type() byte { return h.typ }

// AppendPayload appends the record's encoding (the header, then the
// record's fields) to b, for the log. It panics for a record not bound: the
// log refuses those first, by their type 0.
func (h *Header) AppendPayload(b []byte) []byte {
	if h.rec == nil {
		panic("state: AppendPayload of a record that was not bound (state.Bind)")
	}
	return encode(b, h.rec)
}

func (h *Header) walk(f *codec.Fields) {
	f.Fixed(h.Workspace[:])
	f.Uvarint(&h.Seq)
}

// Record is one change to the state, as the log keeps it: pure data, fully
// decided before it is logged (ids, times, outcome), so that applying it
// live and on replay gives the same state.
//
// A record type is declared once, in the file of its area: its struct
// (which embeds Header), its layout (fields, which both writes and reads
// it) and the change it makes (apply); and one line in the registry, which
// gives it its number (part of the log format, never reused).
type Record interface {
	// Type returns the record's type number (Header's).
	Type() byte
	// AppendPayload appends the record's encoding (Header's).
	AppendPayload(dst []byte) []byte
	// Head returns the record's header.
	Head() *Header
	fields(f *codec.Fields)
	apply(w *Workspace) error
}

// typeOf maps each record's Go type to its number (from the registry).
var typeOf = func() map[reflect.Type]byte {
	m := map[reflect.Type]byte{}
	for t, k := range registry {
		if k.make != nil {
			m[reflect.TypeOf(k.make())] = byte(t)
		}
	}
	return m
}()

// Bind ties rec's header to rec and to its type number, so that it can be
// logged (Type, AppendPayload), and returns rec. It panics for a type the
// registry does not list: a record type is code, not input.
func Bind(rec Record) Record {
	h := rec.Head()
	if h.rec == nil {
		t, ok := typeOf[reflect.TypeOf(rec)]
		if !ok {
			panic(fmt.Sprintf("state: %T is not in the registry", rec))
		}
		h.rec, h.typ = rec, t
	}
	return rec
}

// kind is what the registry knows of a record type.
type kind struct {
	make func() Record
	// keepsFigures: applying it cannot move a derived figure (status
	// counts, SLA, health), so the kept figures stay valid.
	keepsFigures bool
}

// pooled are the records' reusable codec.Fields: records are encoded on
// the log's committer and snapshots on the actors, at once, and a replay
// decodes millions (a Fields made for each escaped, through the record's
// fields method: two allocations a record).
var pooled = sync.Pool{New: func() any { return new(codec.Fields) }}

// walk walks r's header and fields with a pooled Fields that reset makes
// an encoder or a decoder; it returns what an encoder wrote, or a
// decoder's error.
func walk(r Record, reset func(f *codec.Fields)) ([]byte, error) {
	f := pooled.Get().(*codec.Fields)
	reset(f)
	r.Head().walk(f)
	r.fields(f)
	out, err := f.Bytes(), f.Done()
	f.ResetEncoder(nil)
	pooled.Put(f)
	return out, err
}

// encode appends r's header and fields to dst.
func encode(dst []byte, r Record) []byte {
	out, _ := walk(r, func(f *codec.Fields) { f.ResetEncoder(dst) })
	return out
}

// Decode turns a record type and payload read from the log back into a
// record. It returns an error for an unknown type or a malformed payload.
func Decode(typ byte, payload []byte) (Record, error) {
	k := registry[typ]
	if k.make == nil {
		return nil, fmt.Errorf("decode record: unknown type %d", typ)
	}
	r := Bind(k.make())
	if _, err := walk(r, func(f *codec.Fields) { f.ResetDecoder(payload) }); err != nil {
		return nil, fmt.Errorf("decode record type %d: %w", typ, err)
	}
	return r, nil
}

// Types returns the number of every record type, in order.
func Types() []byte {
	var out []byte
	for t, k := range registry {
		if k.make != nil {
			out = append(out, byte(t))
		}
	}
	return out
}

// New returns an empty record of type typ, or nil for an unknown type.
func New(typ byte) Record {
	if k := registry[typ]; k.make != nil {
		return Bind(k.make())
	}
	return nil
}

// Removal is a record of a thing someone removed, header and body: its id,
// the activity entry's, when, and who (the admin API when empty). A removal
// record's type embeds it and nothing else.
type Removal struct {
	Header
	ID, ActivityID ID
	At             int64
	Actor          string
}

func (r *Removal) fields(f *codec.Fields) { f.Walk(r.ID[:], r.ActivityID[:], &r.At, &r.Actor) }

// remove applies a removal: thing is what r.ID names (nil when the
// workspace has no such thing), drop takes it out of the workspace and
// returns what the activity shows of it; the activity gets the removal's id,
// time and actor. It returns an error naming what (such as "delete unknown
// user") when there is no such thing.
func remove[T any](w *Workspace, r *Removal, what string, thing *T, drop func(*T) Activity) error {
	if thing == nil {
		return fmt.Errorf("%s %s", what, r.ID)
	}
	a := drop(thing)
	a.ID, a.At, a.Actor = r.ActivityID, r.At, actorOr(r.Actor)
	w.addActivity(a)
	return nil
}

// Mark is a record of something that happened to one thing at one time,
// header and body; such a record's type embeds it and nothing else.
type Mark struct {
	Header
	ID ID
	At int64
}

func (r *Mark) fields(f *codec.Fields) { f.Walk(r.ID[:], &r.At) }
