-- The POSTs of the serve-assign row, for wrk: each request asks the admin API to record a
-- batch of users that no request sent before, so every user costs the server a new
-- assignment and its 'first' event (a user already recorded is only read back).
--
-- usage: wrk ... -s assign.lua URL -- KEY BATCH [PREFIX]
-- KEY is an editor key of the tenant, BATCH the users per request. The ids are
-- PREFIX-THREAD-REQUEST-N (PREFIX: load): unique across wrk's threads and requests, and apart
-- from any other user in the database, so Scripts/bench can count exactly the users wrk sent;
-- two wrk at once give two prefixes.

local thread_count = 0

-- In wrk's main Lua state, once per thread before it starts: the thread's number.
function setup(thread)
    thread_count = thread_count + 1
    thread:set("thread_number", thread_count)
end

local batch
local prefix
local requests = 0

function init(args)
    wrk.method = "POST"
    wrk.headers["Authorization"] = "Bearer " .. args[1]
    wrk.headers["Content-Type"] = "application/json"
    batch = tonumber(args[2])
    prefix = args[3] or "load"
end

-- Called for every request (a request() function makes wrk build each one anew).
function request()
    requests = requests + 1
    local users = {}
    for n = 1, batch do
        users[n] = string.format('"%s-%d-%d-%d"', prefix, thread_number, requests, n)
    end
    return wrk.format(nil, nil, nil, '{"users": [' .. table.concat(users, ", ") .. ']}')
end
