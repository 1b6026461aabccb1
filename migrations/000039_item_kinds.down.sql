ALTER TABLE studies DROP COLUMN IF EXISTS mixed_kinds;
DELETE FROM items WHERE kind <> 'image';
ALTER TABLE items DROP CONSTRAINT IF EXISTS items_kind_content;
ALTER TABLE items DROP COLUMN IF EXISTS text;
ALTER TABLE items DROP COLUMN IF EXISTS kind;
ALTER TABLE items ADD CONSTRAINT items_image_or_label CHECK (data IS NOT NULL OR content_type = '');
