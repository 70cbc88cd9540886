/* Symbol layouts that C compilers rarely produce: nesting, overlaps, zero-size labels and aliases. */
    .text
    .globl outer
    .type outer, @function
outer:
    .skip 16
    .type inner, @function
inner:
    .skip 8
    .size inner, 8
    .skip 40
    .size outer, .-outer

    .type bare, @function
bare:
    .skip 32

    .globl after
    .type after, @function
after:
    .skip 16
    .size after, 16

    .globl __internal_name
    .type __internal_name, @function
    .weak public_name
    .type public_name, @function
    .type local_name, @function
__internal_name:
public_name:
local_name:
    .skip 8
    .size __internal_name, 8
    .size public_name, 8
    .size local_name, 8

    .data
    .globl big
    .type big, @object
big:
    .skip 8
    .type small, @object
small:
    .skip 4
    .size small, 4
    .skip 20
    .size big, 32
