! The Fortran writer of fortran.fortran_to_c: puts what c_reader.c checks
! element by element (a 2-D real64 field, a 3-D int32 one in two regions
! at offsets, a 4-D int64 one, a strided real32 section, a put_local
! piece, metadata), checks the errors it must get, prints "ready", waits
! for the file named by its argument (the reader is done), then releases
! the put_local piece. Exits 1 on any failed check.
program fortran_writer
  use, intrinsic :: iso_c_binding, only: c_int
  use, intrinsic :: iso_fortran_env, only: int32, int64, real32, real64, output_unit
  use cove
  use values
  implicit none

  interface
    integer(c_int) function usleep(us) bind(c, name="usleep")
      import :: c_int
      integer(c_int), value :: us
    end function
  end interface

  type(cove_client) :: client
  real(real64) :: f2(5, 7), wrong(5, 7, 1)
  integer(int32) :: low(4, 3, 2), high(4, 3, 4)
  integer(int64) :: f4(2, 3, 4, 5)
  real(real32) :: strided(6, 4)
  real(real64), target :: local(8, 5)
  real(real32) :: single(5, 7)
  integer(int64) :: released
  character(256) :: go
  logical :: there
  integer :: i, j, k, l, tries

  call get_command_argument(1, go)
  call expect_status(cove_connect(client), COVE_OK, "connect")

  ! a(i,j) is the C reader's x[i-1][j-1]: same dimensions, same order.
  call expect_status(cove_define(client, "f2", "f8", [5_int64, 7_int64]), COVE_OK, "define f2")
  do j = 1, 7
    do i = 1, 5
      f2(i, j) = v2(i - 1, j - 1) + 0.5_real64
    end do
  end do
  call expect_status(cove_put(client, "f2", 1_int64, f2), COVE_OK, "put f2")

  ! Two regions: k = 0..1 at the origin, k = 2..5 at start (0,0,2).
  call expect_status(cove_define(client, "f3", "i4", [4_int64, 3_int64, 6_int64]), COVE_OK, "define f3")
  do k = 1, 6
    do j = 1, 3
      do i = 1, 4
        if (k <= 2) then
          low(i, j, k) = int(v3(i - 1, j - 1, k - 1), int32)
        else
          high(i, j, k - 2) = int(v3(i - 1, j - 1, k - 1), int32)
        end if
      end do
    end do
  end do
  call expect_status(cove_put(client, "f3", 1_int64, low), COVE_OK, "put f3 low")
  call expect_status(cove_put(client, "f3", 1_int64, high, [0_int64, 0_int64, 2_int64]), COVE_OK, "put f3 high")

  call expect_status(cove_define(client, "f4", "i8", shape(f4, int64)), COVE_OK, "define f4")
  do l = 1, 5
    do k = 1, 4
      do j = 1, 3
        do i = 1, 2
          f4(i, j, k, l) = v4(i - 1, j - 1, k - 1, l - 1)
        end do
      end do
    end do
  end do
  call expect_status(cove_put(client, "f4", 1_int64, f4), COVE_OK, "put f4")

  ! The odd rows of strided are the variable; the even ones must not be read.
  call expect_status(cove_define(client, "fsec", "f4", [3_int64, 4_int64]), COVE_OK, "define fsec")
  strided = -1
  do j = 1, 4
    do i = 1, 3
      strided(2 * i - 1, j) = real(v2(i - 1, j - 1), real32) + 0.5_real32
    end do
  end do
  call expect_status(cove_put(client, "fsec", 1_int64, strided(1:6:2, :)), COVE_OK, "put strided section")
  call expect_status(cove_put_local(client, "fsec", 2_int64, strided(1:6:2, :)), COVE_INVALID_ARGUMENT, &
                     "put_local of a strided section", "not contiguous")

  call expect_status(cove_define(client, "flocal", "f8", [8_int64, 5_int64]), COVE_OK, "define flocal")
  do j = 1, 5
    do i = 1, 8
      local(i, j) = v2(i - 1, j - 1) + 0.25_real64
    end do
  end do
  call expect_status(cove_put_local(client, "flocal", 1_int64, local), COVE_OK, "put_local flocal")

  call expect_status(cove_put_meta(client, "fnote", 3_int64, "written by Fortran: f2 is 5 x 7"), COVE_OK, &
                     "put_meta")

  ! Errors: a status and a message; nothing stored changes.
  call expect_status(cove_put(client, "f2", 2_int64, wrong), COVE_INVALID_ARGUMENT, "put of 3-D into 2-D f2")
  single = 0
  call expect_status(cove_put(client, "f2", 2_int64, f2, [1_int64, 1_int64, 1_int64]), COVE_INVALID_ARGUMENT, &
                     "start of the wrong size", "start has 3 entries for 2 dimensions")
  call expect_status(cove_put(client, "f2", 2_int64, single), COVE_INVALID_ARGUMENT, "real32 into f8 f2", "bytes")
  call expect_status(cove_put(client, "f2", 2_int64, f2, [1_int64, 0_int64]), COVE_INVALID_ARGUMENT, &
                     "region beyond f2's shape", "outside the global shape")
  call expect_status(cove_put(client, "f2", -2_int64, f2), COVE_INVALID_ARGUMENT, "negative version", "negative")
  call expect_status(cove_put(client, "nowhere", 1_int64, f2), COVE_NOT_FOUND, "put to an undefined variable")

  write (output_unit, '(a)') "ready"
  flush (output_unit)
  there = .false.
  do tries = 1, 6000
    inquire (file=trim(go), exist=there)
    if (there) exit
    i = usleep(10000_c_int)
  end do
  call expect(there, "the reader finished within 60 s")

  call expect_status(cove_release(client, "flocal", 1_int64, shape(local, int64), released=released), COVE_OK, &
                     "release flocal")
  call expect(released == 1, "release dropped one piece")
  call expect_status(cove_get(client, "flocal", 1_int64, local, timeout_ms=0_int64), COVE_NOT_FOUND, "get after release")
  call expect_status(cove_disconnect(client), COVE_OK, "disconnect")
  write (output_unit, '(a,i0,a)') "fortran writer: ", failures, " failed"
  if (failures /= 0) stop 1
end program fortran_writer
