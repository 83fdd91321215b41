:OUTPUT
-m owner ! --uid-owner 1000-2000 ! --gid-owner 5 --suppl-groups ! --socket-exists;-m owner ! --socket-exists ! --uid-owner 1000-2000 ! --gid-owner 5 --suppl-groups;OK
