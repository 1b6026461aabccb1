package collect

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"testing"

	"github.com/closer-lab/closer/internal/landmark"
	"github.com/closer-lab/closer/internal/pgtest"
	"github.com/closer-lab/closer/internal/study"
)

// The items of the study past maxCachedStudies evict the least recently
// questioned study's, not every study's.
func TestItemsCacheEvictsLeastRecentlyUsedStudy(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, _ := pgtest.NewDB(t)
	c := newItemsCache()
	// Studies without items: each read is one empty query.
	for id := range int64(maxCachedStudies) {
		if _, err := c.get(ctx, pool, id, 1); err != nil {
			t.Fatal(err)
		}
	}
	first, _ := c.byStudy.Peek(0)
	if _, err := c.get(ctx, pool, 0, 1); err != nil { // study 0 questioned again
		t.Fatal(err)
	}
	if _, err := c.get(ctx, pool, maxCachedStudies, 1); err != nil {
		t.Fatal(err)
	}
	if n := c.byStudy.Len(); n != maxCachedStudies {
		t.Fatalf("%d studies cached, want %d", n, maxCachedStudies)
	}
	if _, ok := c.byStudy.Peek(1); ok {
		t.Error("study 1, the least recently questioned, was kept past the bound")
	}
	if it, ok := c.byStudy.Peek(0); !ok || it != first {
		t.Error("study 0, questioned since, lost its cached items")
	}
}

// A study's items are served from memory at the version they were read at
// only: a later version reads them again, and a reader of an older version
// does not put its copy over the newer one.
func TestItemsCacheServesNoStaleVersion(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, _ := pgtest.NewDB(t)
	s := New(pool)
	st, err := s.CreateStudy(ctx, study.StudyInput{Slug: "items", Title: "items", QuestionsPerParticipant: 3, Status: study.StatusOpen})
	if err != nil {
		t.Fatal(err)
	}
	InsertLabelItems(t, pool, st.ID, 4)
	c := newItemsCache()
	v5, err := c.get(ctx, pool, st.ID, 5)
	if err != nil {
		t.Fatal(err)
	}
	if len(v5.refs) != 4 || v5.ref(2).Label != "item2" {
		t.Fatalf("items %+v; want item0..item3", v5.refs)
	}
	if _, err := pool.Exec(ctx, `UPDATE items SET label = 'renamed' WHERE study_id = $1 AND idx = 2`, st.ID); err != nil {
		t.Fatal(err)
	}
	if again, err := c.get(ctx, pool, st.ID, 5); err != nil || again != v5 {
		t.Fatalf("the items at the version cached were read again (%v)", err)
	}
	v6, err := c.get(ctx, pool, st.ID, 6)
	if err != nil {
		t.Fatal(err)
	}
	if v6 == v5 || v6.ref(2).Label != "renamed" {
		t.Fatalf("version 6 served item 2 as %q, the copy of version 5", v6.ref(2).Label)
	}
	old, err := c.get(ctx, pool, st.ID, 5) // a slow question still at version 5
	if err != nil {
		t.Fatal(err)
	}
	if old.version != 5 {
		t.Fatalf("a reader at version 5 got version %d", old.version)
	}
	if held, _ := c.byStudy.Peek(st.ID); held != v6 {
		t.Errorf("the cache holds version %d after an older reader; want 6", held.version)
	}
}

// identityKey is a made-up token hash for identity i.
func identityKey(i int) [sha256.Size]byte {
	var k [sha256.Size]byte
	binary.LittleEndian.PutUint64(k[:], uint64(i))
	return k
}

// The identity past maxIdentities evicts the least recently seen one; a
// forgotten participant's identities are gone under every token.
func TestIdentityCacheEvictsLeastRecentlyUsed(t *testing.T) {
	t.Parallel()
	c := newIdentityCache()
	for i := range maxIdentities {
		c.put(identityKey(i), study.Participant{ID: int64(i)})
	}
	if _, ok := c.get(identityKey(0)); !ok {
		t.Fatal("identity 0 missing before the cache was full")
	}
	c.put(identityKey(maxIdentities), study.Participant{ID: maxIdentities})
	if n := c.byHash.Len(); n != maxIdentities {
		t.Fatalf("%d identities cached, want %d", n, maxIdentities)
	}
	if _, ok := c.get(identityKey(1)); ok {
		t.Error("identity 1, the least recently seen, was kept past the bound")
	}
	for _, i := range []int{0, 2, maxIdentities} {
		if p, ok := c.get(identityKey(i)); !ok || p.ID != int64(i) {
			t.Errorf("identity %d: %+v, %v; want it kept", i, p, ok)
		}
	}
	c.put(identityKey(-1), study.Participant{ID: 2}) // participant 2 under a second token
	c.forget(2)
	for _, i := range []int{2, -1} {
		if _, ok := c.get(identityKey(i)); ok {
			t.Errorf("token %d of a forgotten participant still authenticates", i)
		}
	}
	c.forgetKey(func() []byte { k := identityKey(0); return k[:] }())
	if _, ok := c.get(identityKey(0)); ok {
		t.Error("a revoked token's identity is still cached")
	}
}

// The design state past maxCachedArms evicts the least recently written
// arm's.
func TestDesignStateCacheEvictsLeastRecentlyUsedArm(t *testing.T) {
	t.Parallel()
	ds, err := NewDesignScheduler(study.DesignLandmarkK1)
	if err != nil {
		t.Fatal(err)
	}
	for i := range int64(maxCachedArms) {
		ds.entry(armKey{study: i})
	}
	first := ds.entry(armKey{study: 0})
	ds.entry(armKey{study: maxCachedArms})
	if n := ds.cache.Len(); n != maxCachedArms {
		t.Fatalf("%d arms cached, want %d", n, maxCachedArms)
	}
	if _, ok := ds.cache.Peek(armKey{study: 1}); ok {
		t.Error("arm of study 1, the least recently written, was kept past the bound")
	}
	if ds.entry(armKey{study: 0}) != first {
		t.Error("arm of study 0, written since, lost its state")
	}
}

// An arm whose state was evicted is restored from PostgreSQL by its next
// writer, and the design counts every answer.
func TestDesignStateRestoredAfterEviction(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, _ := pgtest.NewDB(t)
	s := New(pool)
	ds := RegisterDesigns(s)[study.DesignLandmarkK1]
	st, err := s.CreateStudy(ctx, study.StudyInput{Slug: "evicted", Title: "evicted", QuestionsPerParticipant: 5,
		Status: study.StatusOpen, Design: study.DesignLandmarkK1, DesignConfig: study.DesignConfig{Seed: 3, Landmarks: 3}})
	if err != nil {
		t.Fatal(err)
	}
	InsertLabelItems(t, pool, st.ID, 8)
	answer := func() {
		t.Helper()
		p, _, err := s.CreateParticipant(ctx, st.ID, "", nil)
		if err != nil {
			t.Fatal(err)
		}
		pr, err := s.Next(ctx, p.ID)
		if err != nil || pr.Question == nil {
			t.Fatalf("next: %+v, %v", pr, err)
		}
		if _, err := s.Answer(ctx, p.ID, study.AnswerInput{QuestionID: pr.Question.ID, Closer: pr.Question.Options[0].Index}); err != nil {
			t.Fatal(err)
		}
		if err := s.RecordPending(ctx); err != nil {
			t.Fatal(err)
		}
	}
	answer()
	key := armKey{st.ID, 0}
	if _, ok := ds.cache.Peek(key); !ok {
		t.Fatal("the arm's state is not cached after its first answer")
	}
	for i := range int64(maxCachedArms) { // other arms' writers push it out
		ds.entry(armKey{study: -1 - i})
	}
	if _, ok := ds.cache.Peek(key); ok {
		t.Fatal("the arm's state was not evicted")
	}
	before := ds.CacheStats().Restores
	answer()
	if got := ds.CacheStats().Restores; got != before+1 {
		t.Errorf("restores %d → %d; want one restore of the evicted state", before, got)
	}
	e, ok := ds.cache.Peek(key)
	if !ok {
		t.Fatal("the arm's state is not cached again after its writer ran")
	}
	e.mu.Lock()
	cached := e.d.(*landmark.Design).Progress().Answered
	e.mu.Unlock()
	d, err := s.DesignState(ctx, st.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	if stored := d.(*landmark.Design).Progress().Answered; cached != 2 || stored != 2 {
		t.Errorf("answered: %d in the cached state, %d stored; want 2 and 2", cached, stored)
	}
}
