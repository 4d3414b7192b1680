package engine

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"backupmon/codec"
	"backupmon/snapshot"
	"backupmon/state"
	"backupmon/wal"
)

// Backups: a file of every workspace's state that an operator keeps away
// from the server (`backupmon admin backup`) and restores into an empty
// data directory (`backupmon restore`).
//
// A backup is a snapshot file at log position 0 (the snapshot package's
// format: header, CRC-chained chunks, trailer), whose body is
//
//	backupMagic "BMBACKUP" | layout uvarint | development clock varint |
//	item ... | 'E'
//	item   'W' | length uvarint | a workspace's encoding (of that layout)
//	       'M' | length uvarint | reference | length uvarint | raw e-mail
//
// The development clock is its time in Unix milliseconds when the backup
// was taken, 0 without one (a restore of a server run with --dev-clock goes
// on at that time). The raw e-mails are those the unparsed entries name, so that they can
// still be re-read after a restore. Items need no count up front, so a
// cluster's backup is its shards' items one after the other (MergeBackups).
// Position 0 marks the file as a backup: a restore takes its workspaces in
// through the log (ImportWorkspace) and needs no log position, and a
// snapshot file of a data directory (position 1 or more), fuzzy without its
// log, is refused.

// backupMagic starts a backup's body.
const backupMagic = "BMBACKUP"

// Item tags of a backup's body.
const (
	itemWorkspace = 'W'
	itemRawMail   = 'M'
	itemEnd       = 'E'
)

// ErrRawGone is wrapped by Options.RawMail's error for a raw e-mail that is
// not kept (deleted with its entry, or lost): a backup leaves it out, and a
// re-read after the restore answers 409 as the live server would.
var ErrRawGone = errors.New("raw e-mail not kept")

// ErrBadBackup is wrapped by the errors of ReadBackup and MergeBackups for
// a file that is not a whole, undamaged backup.
var ErrBadBackup = errors.New("not a whole backup")

// BackupInfo says what a backup holds.
type BackupInfo struct {
	Workspaces int    // workspaces in it
	RawMails   int    // raw e-mails of unparsed entries in it
	Version    uint64 // the workspaces' layout
	DevClock   int64  // the development clock's time (Unix ms) at the backup; 0: none
}

// Backup writes a backup of every workspace to w: each as its actor holds
// it at the moment it is written, while the others keep working, then the
// raw e-mails their unparsed entries name (Options.RawMail). It writes the
// file's trailer only once everything the file holds is durable, so a
// backup cut short, or holding changes a crash then lost, never reads as
// whole. It returns ErrClosed when the engine closes meanwhile, RawMail's
// error other than ErrRawGone, or w's error, wrapped.
func (e *Engine) Backup(w io.Writer) (BackupInfo, error) {
	info := BackupInfo{Version: state.SnapshotVersion}
	if e.dev != nil {
		info.DevClock = e.dev.Now().UnixMilli()
	}
	err := snapshot.Encode(w, 0, func(w io.Writer) error {
		bw := bufio.NewWriterSize(w, 1<<20)
		if _, err := bw.Write(backupHead(info.Version, info.DevClock)); err != nil {
			return err
		}
		var refs []string
		for _, a := range e.sortedActors() {
			type encoded struct {
				blob []byte
				refs []string
			}
			enc := ask(a, func(w *workspace) encoded {
				out := encoded{blob: w.Encode(e.nowMs())}
				for _, u := range w.Unparsed {
					if u.RawRef != "" {
						out.refs = append(out.refs, u.RawRef)
					}
				}
				return out
			})
			if enc.blob == nil {
				return ErrClosed
			}
			if err := writeItem(bw, itemWorkspace, enc.blob); err != nil {
				return err
			}
			refs = append(refs, enc.refs...)
			info.Workspaces++
		}
		if e.opts.RawMail != nil {
			seen := map[string]bool{}
			for _, ref := range refs {
				if seen[ref] {
					continue
				}
				seen[ref] = true
				raw, err := e.opts.RawMail(ref)
				switch {
				case errors.Is(err, ErrRawGone):
					continue
				case err != nil:
					return fmt.Errorf("raw e-mail %s: %w", ref, err)
				}
				if err := writeItem(bw, itemRawMail, []byte(ref), raw); err != nil {
					return err
				}
				info.RawMails++
			}
		}
		if err := bw.WriteByte(itemEnd); err != nil {
			return err
		}
		if err := bw.Flush(); err != nil {
			return err
		}
		if err := e.barrier(); err != nil {
			if errors.Is(err, wal.ErrClosed) {
				return ErrClosed // closed meanwhile, or before, with no workspace to ask
			}
			return err
		}
		return nil
	})
	if err != nil {
		return BackupInfo{}, fmt.Errorf("backup: %w", err)
	}
	return info, nil
}

// backupHead returns the start of a backup's body.
func backupHead(version uint64, dev int64) []byte {
	return codec.AppendVarint(codec.AppendUvarint([]byte(backupMagic), version), dev)
}

// writeItem writes an item: its tag, then each field with its length.
func writeItem(w *bufio.Writer, tag byte, fields ...[]byte) error {
	if err := w.WriteByte(tag); err != nil {
		return err
	}
	var lenBuf [binary.MaxVarintLen64]byte
	for _, f := range fields {
		n := binary.PutUvarint(lenBuf[:], uint64(len(f)))
		if _, err := w.Write(lenBuf[:n]); err != nil {
			return err
		}
		if _, err := w.Write(f); err != nil {
			return err
		}
	}
	return nil
}

// BackupWorkspace is one workspace read from a backup.
type BackupWorkspace struct {
	ID, Name string
	Blob     []byte // its encoding, as ImportWorkspace takes it
	Version  uint64 // the encoding's layout
	Routes   Routes // what a cluster's directory needs of it (cluster import)
}

// BackupReader is what ReadBackup hands a backup's items to; a nil field
// skips those items (they are still checked).
type BackupReader struct {
	Workspace func(BackupWorkspace) error
	RawMail   func(ref string, raw []byte) error
}

// ReadBackup reads a backup from r and hands each workspace, once it
// decodes, and each raw e-mail to to, in the file's order. The whole file
// is checked (every chunk's checksum, the trailer, nothing after it) before
// ReadBackup returns nil, so a caller that must not act on a bad file reads
// it twice: once to check, once to act. It returns to's error as is, or an
// error wrapping ErrBadBackup for a file that is damaged, cut short, of a
// layout this build does not read, or not a backup.
func ReadBackup(r io.Reader, to BackupReader) (BackupInfo, error) {
	var info BackupInfo
	var toErr error
	err := snapshot.Decode(r, 0, func(_ uint64, body io.Reader) error {
		br := bufio.NewReaderSize(body, 1<<20)
		version, dev, err := readBackupHead(br)
		if err != nil {
			return err
		}
		info.Version, info.DevClock = version, dev
		for {
			tag, err := br.ReadByte()
			if err != nil {
				return err
			}
			switch tag {
			case itemWorkspace:
				blob, err := readField(br)
				if err != nil {
					return fmt.Errorf("workspace %d: %w", info.Workspaces, err)
				}
				w, err := state.DecodeWorkspace(blob, version)
				if err != nil {
					return fmt.Errorf("workspace %d does not decode: %w", info.Workspaces, err)
				}
				info.Workspaces++
				if to.Workspace != nil {
					if toErr = to.Workspace(BackupWorkspace{ID: w.ID.String(), Name: w.Name, Blob: blob, Version: version, Routes: routesOf(w)}); toErr != nil {
						return toErr
					}
				}
			case itemRawMail:
				ref, err := readField(br)
				var raw []byte
				if err == nil {
					raw, err = readField(br)
				}
				if err != nil {
					return fmt.Errorf("raw e-mail %d: %w", info.RawMails, err)
				}
				info.RawMails++
				if to.RawMail != nil {
					if toErr = to.RawMail(string(ref), raw); toErr != nil {
						return toErr
					}
				}
			case itemEnd:
				return atEnd(br)
			default:
				return fmt.Errorf("an item of kind %#x", tag)
			}
		}
	})
	switch {
	case toErr != nil:
		return info, toErr
	case err != nil:
		return info, fmt.Errorf("%w: %v", ErrBadBackup, err)
	}
	return info, nil
}

// atEnd returns nil when r holds nothing more: a body's end marker must
// be its last byte.
func atEnd(r *bufio.Reader) error {
	switch _, err := r.ReadByte(); {
	case err == io.EOF:
		return nil
	case err == nil:
		return errors.New("bytes after its end")
	default:
		return err
	}
}

// readBackupHead reads a backup body's magic, layout and development
// clock, and checks that this build reads that layout.
func readBackupHead(r *bufio.Reader) (version uint64, dev int64, err error) {
	b := make([]byte, len(backupMagic))
	if _, err := io.ReadFull(r, b); err != nil {
		return 0, 0, err
	}
	if string(b) != backupMagic {
		return 0, 0, errors.New("its body is not a backup's")
	}
	if version, err = binary.ReadUvarint(r); err != nil {
		return 0, 0, err
	}
	if version < state.OldestSnapshotVersion || version > state.SnapshotVersion {
		return 0, 0, fmt.Errorf("layout %d, this build reads %d to %d", version, state.OldestSnapshotVersion, state.SnapshotVersion)
	}
	if dev, err = binary.ReadVarint(r); err != nil {
		return 0, 0, err
	}
	return version, dev, nil
}

// readField reads a length and that many bytes. It reads what is there
// rather than allocate what the length says, so a damaged length fails at
// the end of the data, not on an allocation.
func readField(r *bufio.Reader) ([]byte, error) {
	n, err := binary.ReadUvarint(r)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if _, err := io.Copy(&buf, io.LimitReader(r, int64(min(n, 1<<62)))); err != nil {
		return nil, err
	}
	if uint64(buf.Len()) != n {
		return nil, io.ErrUnexpectedEOF
	}
	return buf.Bytes(), nil
}

// MergeBackups writes one backup to w of the items of the backups that
// parts open in turn (a cluster's shards, each of layout version), with
// the development clock dev (0: none): what
// each holds is copied as is, checked as it is read, and the trailer is
// written only once every part read whole. It returns what the merged
// backup holds, or an error (wrapping ErrBadBackup for a part that is not
// a whole backup of that layout, or a part's or w's error).
func MergeBackups(w io.Writer, version uint64, dev int64, parts []func() (io.ReadCloser, error)) (BackupInfo, error) {
	info := BackupInfo{Version: version, DevClock: dev}
	err := snapshot.Encode(w, 0, func(w io.Writer) error {
		bw := bufio.NewWriterSize(w, 1<<20)
		if _, err := bw.Write(backupHead(version, dev)); err != nil {
			return err
		}
		for i, open := range parts {
			rc, err := open()
			if err != nil {
				return fmt.Errorf("part %d: %w", i, err)
			}
			err = snapshot.Decode(rc, 0, func(_ uint64, body io.Reader) error {
				return copyItems(bw, bufio.NewReaderSize(body, 1<<20), version, &info)
			})
			rc.Close()
			if err != nil {
				return fmt.Errorf("part %d: %w: %v", i, ErrBadBackup, err)
			}
		}
		if err := bw.WriteByte(itemEnd); err != nil {
			return err
		}
		return bw.Flush()
	})
	if err != nil {
		return BackupInfo{}, fmt.Errorf("merge backups: %w", err)
	}
	return info, nil
}

// copyItems copies a backup body's items, up to its end, from r to w,
// counting them in info; the body must be of layout version.
func copyItems(w *bufio.Writer, r *bufio.Reader, version uint64, info *BackupInfo) error {
	v, _, err := readBackupHead(r)
	if err != nil {
		return err
	}
	if v != version {
		return fmt.Errorf("layout %d, not %d", v, version)
	}
	var lenBuf [binary.MaxVarintLen64]byte
	copyField := func() error {
		n, err := binary.ReadUvarint(r)
		if err != nil {
			return err
		}
		if _, err := w.Write(lenBuf[:binary.PutUvarint(lenBuf[:], n)]); err != nil {
			return err
		}
		_, err = io.CopyN(w, r, int64(min(n, 1<<62)))
		return err
	}
	for {
		tag, err := r.ReadByte()
		if err != nil {
			return err
		}
		fields := 0
		switch tag {
		case itemWorkspace:
			fields = 1
			info.Workspaces++
		case itemRawMail:
			fields = 2
			info.RawMails++
		case itemEnd:
			// Decode checks the file past the body, not the body past
			// its end, which would be left out of the merge unread.
			return atEnd(r)
		default:
			return fmt.Errorf("an item of kind %#x", tag)
		}
		if err := w.WriteByte(tag); err != nil {
			return err
		}
		for range fields {
			if err := copyField(); err != nil {
				return err
			}
		}
	}
}
