package collect

import (
	"context"
	"fmt"
	"unicode/utf8"

	"github.com/closer-lab/closer/internal/cache"
	"github.com/closer-lab/closer/internal/store"
	"github.com/closer-lab/closer/internal/study"
)

// studyItems is a study's items as questions show them (index, label,
// image hash), at one version of the study (studies.version).
type studyItems struct {
	version int64
	refs    []study.ItemRef // by index
	// textChars is the length in characters of the study's longest text
	// item (0: none): the question page sizes every text to fit it, so
	// that the size does not jump from one question to the next.
	textChars int
}

// itemsCache keeps the items of the studies a server has asked questions
// of, so that issuing or showing a question needs no read of the items:
// the question's transaction reads the study's version anyway and reloads
// the items only when it moved (an upload, or the settings changed). It is
// safe across replicas: the version lives in PostgreSQL.
type itemsCache struct {
	byStudy *cache.LRU[int64, *studyItems]
}

// maxCachedStudies bounds the studies whose items a server keeps; past it
// the least recently questioned study's items go (they are read again on
// its next question).
const maxCachedStudies = 256

func newItemsCache() itemsCache {
	return itemsCache{byStudy: cache.New[int64, *studyItems](maxCachedStudies)}
}

// itemsAtVersionSQL reads a study's items for the cache.
const itemsAtVersionSQL = `SELECT idx, label, sha256, kind, coalesce(text, '') FROM items WHERE study_id = $1 ORDER BY idx`

// get returns the items of the study at version, reading them with q (the
// caller's transaction, so they match the version it read) when the copy
// in memory is older.
func (c *itemsCache) get(ctx context.Context, q store.Querier, studyID, version int64) (*studyItems, error) {
	if it, ok := c.byStudy.Get(studyID); ok && it.version == version {
		return it, nil
	}
	rows, err := q.Query(ctx, itemsAtVersionSQL, studyID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	fresh := &studyItems{version: version}
	for rows.Next() {
		var r study.ItemRef
		if err := rows.Scan(&r.Index, &r.Label, &r.SHA256, &r.Kind, &r.Text); err != nil {
			return nil, err
		}
		fresh.textChars = max(fresh.textChars, utf8.RuneCountInString(r.Text))
		if r.Index != len(fresh.refs) {
			return nil, fmt.Errorf("items of study %d are not numbered 0..n-1 (index %d at %d)", studyID, r.Index, len(fresh.refs))
		}
		fresh.refs = append(fresh.refs, r)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	// A slower reader of an older version does not replace a newer copy.
	c.byStudy.AddIf(studyID, fresh, func(old *studyItems) bool { return old.version <= version })
	return fresh, nil
}

// ref returns item i (the zero ItemRef with Index i if the copy lacks it,
// which a consistent version rules out).
func (it *studyItems) ref(i int) study.ItemRef {
	if i >= 0 && i < len(it.refs) {
		return it.refs[i]
	}
	return study.ItemRef{Index: i}
}
