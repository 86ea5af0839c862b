-- The console lists every status, so it needs indexes that the parent-only partial ones do not give.
CREATE INDEX books_title_all_idx ON books (lower(title), id);
CREATE INDEX books_updated_idx ON books (updated_at DESC, id DESC);
CREATE INDEX video_assets_updated_idx ON video_assets (updated_at DESC, id DESC);
