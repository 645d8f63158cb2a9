-- The conditional GET of the serve row's 304 path, for wrk: every request carries
-- If-None-Match with the ETag the server gave, so each answer is a 304 without a body.
--
-- usage: wrk ... -s not_modified.lua URL -- ETAG
-- Each server's own ETag (nginx's is its file's mtime and size, flagpole's a hash of the
-- document), quotes included, as curl read it from the server's 200.

function init(args)
    -- wrk builds the request it repeats after init, from wrk.headers.
    wrk.headers["If-None-Match"] = args[1]
end
