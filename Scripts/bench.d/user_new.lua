-- The new users' GETs of the serve-user row, for wrk: each request asks for the pinned
-- document of a user no request asked for before, so the server records the user's first
-- assignment in every test of the document before answering.
--
-- usage: wrk ... -s user_new.lua URL -- PATH PREFIX
-- The ids are PREFIX-THREAD-REQUEST: unique across wrk's threads and requests, and apart from
-- any other user, so Scripts/bench can count exactly the users wrk sent.

local thread_count = 0

function setup(thread)
    thread_count = thread_count + 1
    thread:set("thread_number", thread_count)
end

local path
local prefix
local requests = 0

function init(args)
    path = args[1]
    prefix = args[2]
end

function request()
    requests = requests + 1
    return wrk.format(nil, string.format("%s?user=%s-%d-%d", path, prefix, thread_number, requests))
end
