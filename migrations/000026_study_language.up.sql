-- Issue 26 item 10 (languages): the language a study's participant pages
-- speak (a tag of internal/i18n's catalog, English by default) and the
-- researcher's overrides of single texts (catalog key -> text).
ALTER TABLE studies ADD COLUMN language text NOT NULL DEFAULT 'en';
ALTER TABLE studies ADD COLUMN text_overrides jsonb NOT NULL DEFAULT '{}'::jsonb;
